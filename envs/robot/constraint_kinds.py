"""The task kinds: each draws an instruction, several world states with one check each, a reference program that
passes every state, and mutants (wrong room, wrong order, missing step, hard-coded state) that must fail.

One function per RoboEval constraint kind (action location, event ordering, manipulation, initial/terminal,
conditional on answers, open-world knowledge, exhaustive search, search and deliver). All words come from
`vocab.py`; everything is the project's own.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlvr_gym.envs.robot import vocab
from rlvr_gym.envs.robot.checkspec import contains
from rlvr_gym.envs.robot.simulator import WorldState

Spec = list[Any]


@dataclass
class Draft:
    kind: str
    instruction: str
    states: list[WorldState]
    checks: list[Spec]
    reference: list[str]  # body lines of task_program
    mutants: list[list[str]]  # body lines of programs that must fail at least one state
    labels: list[str]
    difficulty: int
    meta: dict[str, Any] = field(default_factory=dict)
    timeout_ok: list[bool] | None = None  # per state: a run that never finishes may pass (None: none may)


def q(text: str) -> str:
    """A Python string literal (double quotes, as the reference programs use)."""
    return json.dumps(text)


def program(body: list[str]) -> str:
    return "def task_program():\n" + "".join(f"    {line}\n" for line in body)


def office(person: str) -> str:
    return f"{person}'s office"


def world(rng: random.Random, rooms: list[str], start: str, **kw: Any) -> WorldState:
    order = list(rooms)
    rng.shuffle(order)
    return WorldState(rooms=order, start=start, **kw)


def say_at(room: str, words: str) -> Spec:
    return ["at_first_visit", room, {"call": "say", "words": [words]}]


def visit(room: str) -> dict[str, Any]:
    return {"call": "go_to", "to": room}


def _rooms(rng: random.Random, n: int) -> list[str]:
    return rng.sample(vocab.ROOMS, n)


def _message(rng: random.Random) -> str:
    news = rng.choice(vocab.NEWS).format(n=rng.randint(2, 40), h=rng.randint(1, 12), p=rng.choice(vocab.PEOPLE))
    return f"{rng.choice(vocab.OPENINGS)}, {news}"


def _objects(rng: random.Random) -> tuple[str, str, str]:
    """A coloured object and two distractors (one the same thing in another colour, so colour matters)."""
    thing, other = rng.sample(vocab.OBJECTS, 2)
    colour, twin, third = rng.sample(vocab.COLOURS, 3)
    return f"{colour} {thing}", f"{twin} {thing}", f"{third} {other}"


def action_location(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(4, 6))
    room, msg = rooms[1], _message(rng)
    text = rng.choice(
        [
            'Go to the {r} and say "{m}".',
            'Head over to the {r}, then announce "{m}" there.',
            'Please travel to the {r} and, once you arrive, say "{m}".',
        ]
    ).format(r=room, m=msg)
    starts = [rooms[0], rooms[-1]]
    states = [world(rng, rooms, s) for s in starts]
    check = ["all", say_at(room, msg)]
    ref = [f"go_to({q(room)})", f"say({q(msg)})"]
    wrong = [f"go_to({q(rooms[2])})", f"say({q(msg)})"]
    mutants = [wrong, [ref[1], ref[0]], ref[:1]]
    return Draft("action_location", text, states, [check] * 2, ref, mutants, ["Action Location"], 1)


def event_ordering(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(5, 7))
    a, b, c = rooms[1:4]
    msg = _message(rng)
    text = rng.choice(
        [
            'Visit the {a}, the {b} and the {c}, in that order, and say "{m}" in each of them.',
            'Say "{m}" in the {a} first, then in the {b}, and finally in the {c}.',
            'Go round the {a}, then the {b}, then the {c}, announcing "{m}" in every one.',
        ]
    ).format(a=a, b=b, c=c, m=msg)
    check = [
        "all",
        say_at(a, msg),
        say_at(b, msg),
        say_at(c, msg),
        ["precedes", visit(a), visit(b)],
        ["precedes", visit(b), visit(c)],
    ]
    states = [world(rng, rooms, rooms[0]), world(rng, rooms, rooms[-1])]

    def body(order: list[str]) -> list[str]:
        return [line for r in order for line in (f"go_to({q(r)})", f"say({q(msg)})")]

    mutants = [body([b, a, c]), body([a, b]), body([a, b, rooms[4]]), body([a, c, b])]
    return Draft("event_ordering", text, states, [check] * 2, body([a, b, c]), mutants, ["Event Ordering"], 2)


def manipulation(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(4, 6))
    src, dst = rooms[1], rooms[2]
    obj, *others = _objects(rng)
    text = rng.choice(
        [
            "Take the {o} from the {a} to the {b}.",
            "Bring the {o} that is in the {a} over to the {b}.",
            "Go to the {a}, pick up the {o}, and leave it in the {b}.",
        ]
    ).format(o=obj, a=src, b=dst)
    states = [
        world(rng, rooms, rooms[0], objects={src: [obj, others[0]], dst: [others[1]]}),
        world(rng, rooms, rooms[-1], objects={src: [others[1], obj], rooms[3]: [others[0]]}),
    ]
    pick = {"call": "pick", "words": [obj]}
    check = [
        "all",
        ["exists", {**pick, "at": src}],
        ["exists", {"call": "place", "words": [obj], "at": dst}],
        ["count", {"call": "pick"}, 1],
    ]
    ref = [f"go_to({q(src)})", f"pick({q(obj)})", f"go_to({q(dst)})", f"place({q(obj)})"]
    mutants = [
        [ref[0], ref[1], f"go_to({q(rooms[3])})", ref[3]],
        [ref[0], ref[2], ref[3]],
        [f"go_to({q(dst)})", ref[1], ref[3]],
    ]
    return Draft("manipulation", text, states, [check] * 2, ref, mutants, ["Manipulation at Location"], 2)


def initial_terminal(rng: random.Random) -> Draft:
    person = rng.choice(vocab.PEOPLE)
    rooms = [*_rooms(rng, rng.randint(4, 5)), office(person)]
    msg, done = _message(rng), rng.choice(vocab.DONE_LINES)
    text = rng.choice(
        [
            'Go to {p}\'s office, tell {p} "{m}", then come back to where you started and say "{d}".',
            'Deliver the message "{m}" to {p} in their office. Afterwards return to your starting point and say "{d}".',
            'Visit {p}\'s office and say "{m}". When that is done, go back to where you began and say "{d}".',
        ]
    ).format(p=person, m=msg, d=done)
    starts = rng.sample(rooms[:-1], 3)
    states = [world(rng, rooms, s, people={office(person): {person: ["ok"]}}) for s in starts]
    checks = [
        ["all", say_at(office(person), msg), ["terminal", {"call": "say", "words": [done], "at": s}]] for s in starts
    ]
    ref = ["start = get_current_location()", f"go_to({q(office(person))})", f"say({q(msg)})", "go_to(start)",
           f"say({q(done)})"]  # fmt: skip
    mutants = [ref[1:3] + [f"say({q(done)})"], ref[1:3] + [f"go_to({q(starts[0])})", f"say({q(done)})"], ref[:3]]
    return Draft("initial_terminal", text, states, checks, ref, mutants, ["Correct Initial/Terminal"], 2)


def conditional(rng: random.Random) -> Draft:
    person = rng.choice(vocab.PEOPLE)
    x, y = rng.sample(rng.choice(vocab.CHOICES) if rng.random() < 0.5 else _objects(rng)[:2], 2)
    rooms = [*_rooms(rng, rng.randint(4, 5)), office(person)]
    store, where = rooms[1], office(person)
    text = rng.choice(
        [
            "Go to {p}'s office and ask {p} whether they would like {x} or {y}. Get their choice from the {k} and "
            "bring it to them.",
            "Ask {p} in their office if they want {x} or {y}, then fetch whichever they pick from the {k} and "
            "deliver it to {p}'s office.",
            "Find out from {p} (in {p}'s office) whether they prefer {x} or {y}; bring them that item from the {k}.",
        ]
    ).format(p=person, x=x, y=y, k=store)
    states, checks = [], []
    for chosen, other in ((x, y), (y, x)):
        states.append(world(rng, rooms, rooms[0], objects={store: [x, y]}, people={where: {person: [chosen]}}))
        checks.append(
            [
                "all",
                ["at_first_visit", where, {"call": "ask", "options": [x, y]}],
                ["exists", {"call": "pick", "words": [chosen], "at": store}],
                ["exists", {"call": "place", "words": [chosen], "at": where}],
                ["not", ["exists", {"call": "pick", "words": [other]}]],
                ["precedes", {"call": "ask"}, {"call": "pick"}],
            ]
        )
    ask = [f"question = {q(f'Would you like {x} or {y}?')}", f"choice = ask({q(person)}, question, [{q(x)}, {q(y)}])"]
    tail = [f"go_to({q(store)})", "pick(choice)", f"go_to({q(where)})", "place(choice)"]
    ref = [f"go_to({q(where)})", *ask, *tail]
    mutants = [[f"go_to({q(where)})", f"choice = {q(x)}", *tail], [f"choice = {q(y)}", *tail]]
    labels = ["Conditional on Answers", "Manipulation at Location"]
    return Draft("conditional", text, states, checks, ref, mutants, labels, 3)


def _single(members: tuple[str, ...]) -> list[str]:
    """The members an option can offer on its own: those naming no other member ("herbal tea" also names "tea",
    so as an option it offers neither)."""
    return [m for m in members if sum(contains(m, other) for other in members) == 1]


def open_world(rng: random.Random) -> Draft:
    person, listener = rng.sample(vocab.PEOPLE, 2)
    category = rng.choice(sorted(vocab.CATEGORIES))
    members, least = vocab.CATEGORIES[category], rng.choice((3, 4))
    rooms = [*_rooms(rng, rng.randint(5, 6)), office(person)]
    where = rooms[1]  # the second person waits in an ordinary room, so tasks differ by more than names
    text = rng.choice(
        [
            "Go to {p}'s office and ask {p} which {c} they like best, offering at least {n} choices. Then tell {w}, "
            "who is in the {r}, what they said.",
            "Ask {p}, in their office, to pick a favourite {c} from {n} or more options you suggest, and report "
            "their pick to {w} in the {r}.",
            "Find {p} in {p}'s office, give them a choice of at least {n} kinds of {c}, and tell {w} (in the {r}) "
            "which one they chose.",
        ]
    ).format(p=person, c=category, n=least, w=listener, r=where)
    starts = rng.sample([r for r in rooms[:-1] if r != where], 2)
    ask = {"call": "ask", "options": list(members), "min": least}
    people = {office(person): {person: [".*"]}, where: {listener: ["ok"]}}
    states = [world(rng, rooms, s, people=people) for s in starts]
    check = ["all", ["at_first_visit", office(person), ask], ["reports", ask, {"call": "say", "at": where}]]
    options = "[" + ", ".join(q(m) for m in rng.sample(_single(members), least)) + "]"
    few = "[" + ", ".join(q(m) for m in members[: least - 1]) + "]"
    head = [f"go_to({q(office(person))})", f"question = {q(f'Which {category} do you like best?')}"]
    report = [f"go_to({q(where)})", f"say({q(person + ' likes ')} + answer)"]
    ref = [*head, f"options = {options}", f"answer = ask({q(person)}, question, options)", *report]
    mutants = [
        [*head, f"options = {few}", *ref[3:]],
        ref[:4],
        [*ref[:4], report[1]],
    ]
    return Draft("open_world", text, states, [check] * 2, ref, mutants, ["Open-World Knowledge"], 3,
                 {"category": category})  # fmt: skip


def exhaustive_search(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(6, 8))
    obj, twin, third = _objects(rng)
    start, skip, places = rooms[0], rooms[1], rooms[2:]
    listener = rng.choice(vocab.PEOPLE) if rng.random() < 0.5 else None
    dest = office(listener) if listener else start
    missing = rng.random() < 0.5  # report the rooms without the object instead of those with it
    which = "do not have one" if missing else "have one"
    whom = f"go to {listener}'s office and tell {listener}" if listener else "come back and tell me"
    text = rng.choice(
        [
            "Check every room except the {x} for a {o}, then {w} the names of the rooms that {h}.",
            "Look in each room but the {x} to see whether it has a {o}. Afterwards {w} which rooms {h}.",
            "Go through all the rooms apart from the {x} checking for a {o}; when you are done, {w} the rooms "
            "that {h}.",
        ]
    ).format(o=obj, w=whom, h=which, x=skip)
    all_rooms = [*rooms, dest] if listener else rooms
    people = {dest: {listener: ["ok"]}} if listener else {}
    subsets = [rng.sample(places, 1), rng.sample(places, 2), []]
    states, checks = [], []
    for found in subsets:
        objects = {r: [obj] if r in found else [rng.choice((twin, third))] for r in places}
        states.append(world(rng, all_rooms, start, objects={**objects, skip: [obj]}, people=people))
        listed = [r for r in places if (r in found) != missing]
        report = {"call": "say", "at": dest}
        checks.append(
            [
                "all",
                *[["at_first_visit", r, {"call": "is_in_room", "entity": obj}] for r in places],
                ["not", ["exists", {"call": "is_in_room", "at": skip}]],
                ["terminal", report],
                *[["exists", {**report, "words": [r]}] for r in listed],
                *[["not", ["exists", {**report, "words": [r]}]] for r in [*places, skip] if r not in listed],
            ]
        )
    test = f"not is_in_room({q(obj)})" if missing else f"is_in_room({q(obj)})"
    search = ["    go_to(room)", f"    if {test}:", "        listed.append(room)"]
    goal = "go_to(start)" if not listener else f"go_to({q(dest)})"
    report = [goal, "if listed:", f"    say({q('The rooms are: ')} + \", \".join(listed))", "else:",
              f"    say({q('There are no such rooms')})"]  # fmt: skip
    head = ["start = get_current_location()", "listed = []", "for room in get_all_rooms():"]
    ref = [*head, f"    if room == {q(skip)}:", "        continue", *search, *report]
    partial = "[" + ", ".join(q(r) for r in places[:-1]) + "]"
    first = [r for r in places if (r in subsets[0]) != missing]
    mutants = [
        [*head[:2], f"for room in {partial}:", *search, *report],
        [*head, *search, *report],
        [*ref[:-5], goal, f"say({q(', '.join(first))})"],
        [*ref[:-5], *report[1:]],
    ]
    return Draft("exhaustive_search", text, states, checks, ref, mutants, ["Exhaustive Search"], 4)


def search_deliver(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(5, 7))
    obj, twin, third = _objects(rng)
    dst, hiding = rooms[1], rng.sample(rooms[2:], 3)
    done = rng.choice(vocab.DONE_LINES)
    text = rng.choice(
        [
            'Somewhere in the building there is a {o}. Find it, bring it to the {b} and say "{d}" there.',
            'Search the rooms until you find the {o}, then carry it to the {b} and announce "{d}".',
            'I lost my {o}. Look for it room by room, put it in the {b} once you have it, and say "{d}".',
        ]
    ).format(o=obj, b=dst, d=done)
    states, checks = [], []
    for spot in hiding:
        objects = {r: [obj] if r == spot else [rng.choice((twin, third))] for r in rooms[1:]}
        states.append(world(rng, rooms, rooms[0], objects=objects))
        checks.append(
            [
                "all",
                ["at_first_visit", spot, {"call": "is_in_room", "entity": obj}],
                ["exists", {"call": "pick", "words": [obj], "at": spot}],
                ["exists", {"call": "place", "words": [obj], "at": dst}],
                ["precedes", {"call": "pick"}, {"call": "place"}],
                ["after_first", {"call": "place"}, {"call": "say", "words": [done], "at": dst}],
            ]
        )

    def body(deliver: list[str]) -> list[str]:
        head = ["for room in get_all_rooms():", "    go_to(room)", f"    if is_in_room({q(obj)}):"]
        return [*head, f"        pick({q(obj)})", *(f"        {line}" for line in deliver), "        break"]

    ref = body([f"go_to({q(dst)})", f"place({q(obj)})", f"say({q(done)})"])  # robust to random answers
    mutants = [
        [f"go_to({q(hiding[0])})", f"pick({q(obj)})", f"go_to({q(dst)})", f"place({q(obj)})", f"say({q(done)})"],
        body([f"go_to({q(rooms[0])})", f"place({q(obj)})", f"say({q(done)})"]),
        body([f"place({q(obj)})", f"say({q(done)})"]),
        body([f"go_to({q(dst)})", f"say({q(done)})", f"place({q(obj)})"]),
    ]
    labels = ["Exhaustive Search", "Manipulation at Location"]
    return Draft("search_deliver", text, states, checks, ref, mutants, labels, 5)


def wait_for_visitor(rng: random.Random) -> Draft:
    """Wait at a spot for a visitor and guide them if they came for the event. Two states allow a timeout (the
    visitor says no, or never comes: a program that keeps waiting never finishes), as RoboEval's waiting tasks do."""
    rooms = _rooms(rng, rng.randint(4, 6))
    spot, dest = rooms[1], rooms[2]
    event = rng.choice(("workshop", "open day", "interview", "tour", "seminar", "book club"))
    welcome, arrived = rng.choice(("Welcome", "Welcome aboard", "Welcome to the building")), rng.choice(
        ("We have arrived", "Here we are", "This is the place"))  # fmt: skip
    text = rng.choice(
        [
            "Wait in the {s} until someone shows up. Ask them whether they are here for the {e}; if they are, say "
            '"{w}", ask them to follow you, take them to the {d} and say "{a}" there.',
            "Stay in the {s} and keep checking for a visitor. When one arrives, ask if they came for the {e}. If so, "
            'greet them with "{w}", guide them to the {d} and announce "{a}".',
        ]
    ).format(s=spot, e=event, w=welcome, d=dest, a=arrived)
    ask = {"call": "ask", "words": [event]}
    first = ["not", ["before_first", visit(spot), {"call": "go_to"}]]  # the spot is where the robot goes first
    looks = ["at_first_visit", spot, {"call": "is_in_room"}]
    came = [
        "all", first, looks, ["at_first_visit", spot, ask],
        # nested windows: after the question and before leaving for the destination, the welcome is said
        ["after_first", ask, ["before_first", visit(dest), ["exists", {"call": "say", "words": [welcome]}]]],
        say_at(dest, arrived),
    ]  # fmt: skip
    declined = ["all", first, looks, ["at_first_visit", spot, ask], ["not", ["exists", visit(dest)]]]
    nobody = ["all", first, looks, ["not", ["exists", {"call": "ask"}]], ["not", ["exists", visit(dest)]]]
    states = [
        world(rng, rooms, rooms[0], people={spot: {".*": ["yes"]}}),
        world(rng, rooms, rooms[0], people={spot: {".*": ["no"]}}),
        world(rng, rooms, rooms[0], people={rooms[0]: {".*": ["yes"]}}),
    ]

    def body(welcome_at: str = "spot", goes: str = "if_yes") -> list[str]:
        greet = [f"say({q(welcome)})", 'say("Please follow me")']
        guide = [*greet * (welcome_at == "spot"), f"go_to({q(dest)})", *greet * (welcome_at == "dest"),
                 f"say({q(arrived)})", "break"]  # fmt: skip
        answer = f'answer = ask("visitor", "Are you here for the {event}?", ["yes", "no"])'
        decide = ['if answer == "yes":', *(f"    {line}" for line in guide)] if goes == "if_yes" else guide
        return ["import time", f"go_to({q(spot)})", "while True:", '    if is_in_room("person"):',
                f"        {answer}", *(f"        {line}" for line in decide), "    time.sleep(1)"]  # fmt: skip

    mutants = [
        body(goes="always"),  # guides a visitor who said no
        body(welcome_at="dest"),  # welcomes only after leaving the spot
        [f"go_to({q(dest)})", f"say({q(arrived)})"],  # never waits or asks
    ]
    return Draft("wait_for_visitor", text, states, [came, declined, nobody], body(), mutants,
                 ["Correct Initial/Terminal", "Event Ordering", "Ask/Say Statement at Location"], 3,
                 timeout_ok=[False, True, True])  # fmt: skip


KINDS: dict[str, Callable[[random.Random], Draft]] = {
    "action_location": action_location,
    "event_ordering": event_ordering,
    "manipulation": manipulation,
    "initial_terminal": initial_terminal,
    "conditional": conditional,
    "open_world": open_world,
    "exhaustive_search": exhaustive_search,
    "search_deliver": search_deliver,
    "wait_for_visitor": wait_for_visitor,
}
PROGRAM_ONLY = frozenset({"wait_for_visitor"})  # a state that never finishes has no call-by-call episode
