"""GeoX family: procedural, OpenStreetMap and NEON aerial scenes, a typed spatial DSL and exact-answer verification."""

# env id suffix -> (module:class under envs/geo, description, task options)
ENVS: dict[str, tuple[str, str, dict[str, str]]] = {
    "": (
        "env:GeoEnv",
        "Evaluate a spatial DSL program on a procedural aerial scene (image + question; render=text: object list)",
        {},
    ),
    "-Abduction": (
        "env:GeoEnv",
        "GeoX abduction: fill a literal hole so a program gives a target",
        {"mode": "abduction"},
    ),
    "-Induction": (
        "env:GeoEnv",
        "GeoX induction: write a program from (scene, answer) examples",
        {"mode": "induction"},
    ),
    "-OSM": (
        "env:GeoEnv",
        "GeoX deduction on real OpenStreetMap Helsinki tiles (ODbL; setup_geo.sh)",
        {"source": "osm"},
    ),
    "-NEON": (
        "env:GeoEnv",
        "GeoX deduction on real NEON aerial photo crops with tree boxes (setup_geo.sh)",
        {"source": "neon"},
    ),
    "-Propose": (
        "propose:GeoProposeEnv",
        "GeoX proposer role: write a valid, non-trivial program (validity reward)",
        {},
    ),
    "-Tools": (
        "env:GeoToolsEnv",
        "GeoX deduction, multi-turn: no scene in the prompt, a segment(class) perception tool (ColorSeg)",
        {},
    ),
}


def register_envs() -> None:
    from rlvr_gym import register

    for suffix, (target, description, options) in ENVS.items():
        register(
            f"rlvr/GeoX{suffix}-v0",
            f"rlvr_gym.envs.geo.{target}",
            family="geo",
            description=description,
            **options,
        )
