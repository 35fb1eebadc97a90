"""GeoX family: procedural, OpenStreetMap and NEON aerial scenes, a typed spatial DSL and exact-answer verification."""


def register_envs() -> None:
    from rlvr_gym import register

    register(
        "rlvr/GeoX-v0",
        "rlvr_gym.envs.geo.env:GeoEnv",
        family="geo",
        description="Evaluate a spatial DSL program on a procedural aerial scene (image + text)",
    )
    for mode in ("Abduction", "Induction"):
        register(
            f"rlvr/GeoX-{mode}-v0",
            "rlvr_gym.envs.geo.env:GeoEnv",
            family="geo",
            description=f"GeoX {mode.lower()}: spatial DSL over procedural aerial scenes",
            mode=mode.lower(),
        )
    register(
        "rlvr/GeoX-OSM-v0",
        "rlvr_gym.envs.geo.env:GeoEnv",
        family="geo",
        description="GeoX deduction on real OpenStreetMap Helsinki tiles drawn top-down (ODbL; needs setup_geo.sh)",
        source="osm",
    )
    register(
        "rlvr/GeoX-NEON-v0",
        "rlvr_gym.envs.geo.env:GeoEnv",
        family="geo",
        description="GeoX deduction on real NEON aerial photo crops with annotated trees (needs setup_geo.sh)",
        source="neon",
    )
    register(
        "rlvr/GeoX-Tools-v0",
        "rlvr_gym.envs.geo.env:GeoToolsEnv",
        family="geo",
        description="GeoX deduction with a segment(class) perception tool (ColorSeg by default), multi-turn",
    )
