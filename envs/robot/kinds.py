"""The task kinds: each draws an instruction, several world states with one check each, a reference program that
passes every state, and mutants (wrong room, wrong order, missing step, hard-coded state) that must fail.

One function per constraint kind of the spec (action location, event ordering, manipulation, initial/terminal,
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
    return f"{rng.choice(vocab.OPENINGS)}, {rng.choice(vocab.NEWS)}"


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
    obj, *others = rng.sample(vocab.OBJECTS, 3)
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
    x, y = rng.choice(vocab.CHOICES)
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
                ["at_first_visit", where, {"call": "ask", "words": [x, y]}],
                ["exists", {"call": "pick", "words": [chosen], "at": store}],
                ["exists", {"call": "place", "words": [chosen], "at": where}],
                ["not", ["exists", {"call": "pick", "words": [other]}]],
                ["precedes", {"call": "ask"}, {"call": "pick"}],
            ]
        )
    ask = f"choice = ask({q(person)}, {q(f'Would you like {x} or {y}?')}, [{q(x)}, {q(y)}])"
    tail = [f"go_to({q(store)})", "pick(choice)", f"go_to({q(where)})", "place(choice)"]
    ref = [f"go_to({q(where)})", ask, *tail]
    mutants = [[f"go_to({q(where)})", f"choice = {q(x)}", *tail], [f"choice = {q(y)}", *tail]]
    labels = ["Conditional on Answers", "Manipulation at Location"]
    return Draft("conditional", text, states, checks, ref, mutants, labels, 3)


def open_world(rng: random.Random) -> Draft:
    person = rng.choice(vocab.PEOPLE)
    category = rng.choice(sorted(vocab.CATEGORIES))
    members = vocab.CATEGORIES[category]
    rooms = [*_rooms(rng, rng.randint(4, 5)), office(person)]
    text = rng.choice(
        [
            "Go to {p}'s office and ask {p} which {c} they like best, offering at least three choices. Then come "
            "back and tell me what they said.",
            "Ask {p}, in their office, to pick a favourite {c} from three or more options you suggest, and report "
            "their pick to me where I am.",
            "Find {p} in {p}'s office, give them a choice of at least three kinds of {c}, and come back to tell me "
            "which one they chose.",
        ]
    ).format(p=person, c=category)
    starts = rng.sample(rooms[:-1], 2)
    ask = {"call": "ask", "any_of": list(members), "min": 3}
    states = [world(rng, rooms, s, people={office(person): {person: [".*"]}}) for s in starts]
    checks = [
        ["all", ["at_first_visit", office(person), ask], ["reports", ask, {"call": "say", "at": s}]] for s in starts
    ]
    options = "[" + ", ".join(q(m) for m in rng.sample(members, 3)) + "]"
    question = q(f"Which {category} do you like best?")
    head = ["start = get_current_location()", f"go_to({q(office(person))})"]
    ref = [*head, f"answer = ask({q(person)}, {question}, {options})", "go_to(start)",
           f"say({q(person + ' likes ')} + answer)"]  # fmt: skip
    two = "[" + ", ".join(q(m) for m in members[:2]) + "]"
    mutants = [
        [*head, f"answer = ask({q(person)}, {question}, {two})", "go_to(start)", ref[-1]],
        ref[:3],
        ref[:3] + [ref[-1]],
    ]
    return Draft("open_world", text, states, checks, ref, mutants, ["Open-World Knowledge"], 3, {"category": category})


def exhaustive_search(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(5, 7))
    obj, other = rng.sample(vocab.OBJECTS, 2)
    start, places = rooms[0], rooms[1:]
    text = rng.choice(
        [
            "Check every room for a {o}, then come back and tell me the names of the rooms that have one.",
            "Look in each room to see whether it has a {o}. Return to me and say which rooms have one.",
            "Go through all the rooms checking for a {o}; when you are back where you started, list the rooms "
            "where you saw one.",
        ]
    ).format(o=obj)
    subsets = [rng.sample(places, 1), rng.sample(places, 2), []]
    states, checks = [], []
    for found in subsets:
        objects = {r: [obj] if r in found else [other] for r in places}
        states.append(world(rng, rooms, start, objects=objects))
        report = {"call": "say", "at": start}
        checks.append(
            [
                "all",
                *[["at_first_visit", r, {"call": "is_in_room", "words": [obj]}] for r in places],
                ["terminal", report],
                *[["exists", {**report, "words": [r]}] for r in found],
                *[["not", ["exists", {**report, "words": [r]}]] for r in places if r not in found],
            ]
        )
    search = ["    go_to(room)", f"    if is_in_room({q(obj)}):", "        found.append(room)"]
    report = ["go_to(start)", "if found:", f"    say({q(f'I saw a {obj} in: ')} + \", \".join(found))", "else:",
              f"    say({q(f'There is no {obj} in any room')})"]  # fmt: skip
    head = ["start = get_current_location()", "found = []"]
    ref = [*head, "for room in get_all_rooms():", *search, *report]
    partial = "[" + ", ".join(q(r) for r in places[:-1]) + "]"
    mutants = [
        [*head, f"for room in {partial}:", *search, *report],
        [*head, "for room in get_all_rooms():", *search, f"say({q(' '.join(subsets[0]))})"],
        [*head, "for room in get_all_rooms():", *search, *report[1:]],
    ]
    return Draft("exhaustive_search", text, states, checks, ref, mutants, ["Exhaustive Search"], 4)


def search_deliver(rng: random.Random) -> Draft:
    rooms = _rooms(rng, rng.randint(5, 7))
    obj, other = rng.sample(vocab.OBJECTS, 2)
    dst, hiding = rooms[1], rng.sample(rooms[2:], 3)
    text = rng.choice(
        [
            "Somewhere in the building there is a {o}. Find it and bring it to the {b}.",
            "Search the rooms until you find the {o}, then carry it to the {b}.",
            "I lost my {o}. Look for it room by room and put it in the {b} once you have it.",
        ]
    ).format(o=obj, b=dst)
    states, checks = [], []
    for spot in hiding:
        objects = {r: [obj] if r == spot else [other] for r in rooms[1:]}
        states.append(world(rng, rooms, rooms[0], objects=objects))
        checks.append(
            [
                "all",
                ["at_first_visit", spot, {"call": "is_in_room", "words": [obj]}],
                ["exists", {"call": "pick", "words": [obj], "at": spot}],
                ["exists", {"call": "place", "words": [obj], "at": dst}],
                ["precedes", {"call": "pick"}, {"call": "place"}],
            ]
        )

    def body(deliver: list[str]) -> list[str]:
        head = ["for room in get_all_rooms():", "    go_to(room)", f"    if is_in_room({q(obj)}):"]
        return [*head, f"        pick({q(obj)})", *(f"        {line}" for line in deliver), "        break"]

    ref = body([f"go_to({q(dst)})", f"place({q(obj)})"])  # places only when found: robust to random answers
    mutants = [
        [f"go_to({q(hiding[0])})", f"pick({q(obj)})", f"go_to({q(dst)})", f"place({q(obj)})"],
        body([f"go_to({q(rooms[0])})", f"place({q(obj)})"]),
        body([f"place({q(obj)})"]),
    ]
    labels = ["Exhaustive Search", "Manipulation at Location"]
    return Draft("search_deliver", text, states, checks, ref, mutants, labels, 5)


KINDS: dict[str, Callable[[random.Random], Draft]] = {
    "action_location": action_location,
    "event_ordering": event_ordering,
    "manipulation": manipulation,
    "initial_terminal": initial_terminal,
    "conditional": conditional,
    "open_world": open_world,
    "exhaustive_search": exhaustive_search,
    "search_deliver": search_deliver,
}
