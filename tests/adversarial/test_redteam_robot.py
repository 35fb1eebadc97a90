"""Red team, robot programs (issue #43): attacks by a model that has read the verifier. Each one must not score.

Classes: verdicts that depend on the process (clock, entropy, addresses, state left by an earlier run), and
checks that match words anywhere instead of what a call means (choices not offered as `ask` options, a report
that names every option, the wrong object picked, a vague `is_in_room`).
"""

from __future__ import annotations

import re

import pytest

from rlvr_gym.envs.robot.checkspec import holds
from rlvr_gym.envs.robot.execution import RobotExecutor
from rlvr_gym.envs.robot.program import extract
from rlvr_gym.envs.robot.simulator import Robot, WorldState
from rlvr_gym.envs.robot.tasks import RobotTasks
from rlvr_gym.envs.robot.verifier import judge, verify


def _task(kind: str, index: int = 0):
    return RobotTasks(seed=0, kinds=[kind]).task(index)


def _body(task, depth: int = 2) -> str:
    """The reference program's body at `depth` indents (2: under an `if` inside task_program)."""
    lines = task.reference_actions[0].split("\n")[2:-1]
    return "\n".join("    " * (depth - 1) + line for line in lines)


def _fenced(program: str) -> str:
    return f"```python\n{program}\n```"


# ---- verdicts that depend on the process ------------------------------------------------------------------------
READS_THE_PROCESS = {  # lines inside task_program that say what they read and set `coin`; the task runs if coin
    "clock": "import time\n    say(str(time.time()) + ' ' + str(time.perf_counter()))\n"
    "    coin = int(time.perf_counter() * 1e6) % 2",
    "busy_wait_on_the_clock": "import time\n    n, end = 0, time.time() + 0.02\n    while time.time() < end:\n"
    "        n += 1\n    say(str(n))\n    coin = n % 2",
    "system_random": "import random\n    coin = random.SystemRandom().random() < 0.5\n    say(str(coin))",
    "reseeded_from_the_os": "import random\n    random.seed()\n    x = random.random()\n    say(str(x))\n"
    "    coin = x < 0.5",
    "unseeded_random": "import random\n    x = random.Random().random()\n    say(str(x))\n    coin = x < 0.5",
    "address": "\n    say(repr(task_program))\n    coin = sum(map(ord, repr(task_program))) % 2",
    "address_in_an_error": "\n    try:\n        [].index(task_program)\n    except ValueError as e:\n"
    "        say(str(e))\n        coin = sum(map(ord, str(e))) % 2",
    "set_order_of_functions": "\n    order = [g() for g in set([lambda i=i: i for i in range(300)])]\n"
    "    say(str(order[:8]))\n    coin = order[0] % 2",
    "set_order_of_nans": "\n    xs = [float(str(i) + 'e999') * 0 for i in range(64)]\n"
    "    order = [[y is v for y in xs].index(True) for v in set(xs)]\n    say(str(order[:8]))\n    coin = order[0] % 2",
}


def _reads(name: str, task) -> str:
    imports, lines = READS_THE_PROCESS[name].split("\n", 1)
    return _fenced(f"{imports}\ndef task_program():\n{lines}\n    if coin:\n{_body(task)}")


@pytest.mark.parametrize("name", sorted(READS_THE_PROCESS))
def test_a_program_that_reads_the_process_gets_one_verdict_everywhere(name, two_sandboxes):
    task = _task("action_location")
    text = _reads(name, task)
    first, second = (RobotExecutor(box) for box in two_sandboxes)
    seen = []
    for executor in (first, first, second):
        found = judge(task, [text], executor=executor)
        seen.append((found.verdict.model_dump(), [(o.end, o.trace) for o in found.outcomes]))
    assert seen[0] == seen[1] == seen[2]
    state = WorldState.from_json(task.ground_truth["states"][0])  # the same world state twice in one job
    twice = first.run(extract(text).code, [(state, None), (state, None)])
    assert twice[0] == twice[1]


def test_a_run_never_sees_what_an_earlier_run_left(two_sandboxes):
    # The first world state's run marks a shared module; later runs see the mark and skip the task.
    task = _task("action_location")
    program = "import math\ndef task_program():\n    try:\n        math.ran\n        return\n" \
              "    except AttributeError:\n        math.ran = 1\n{body}"  # fmt: skip
    text = _fenced(program.format(body=_body(task, depth=1)))
    verdict = verify(task, [text], executor=RobotExecutor(two_sandboxes[0]))
    assert verdict.components["functional"] == 1.0  # every state is judged as if it ran alone


# ---- checks from what calls mean: "offer the choices and report the answer" ------------------------------------
def _open_world():
    task = _task("open_world")
    ref = task.reference_actions[0]
    rooms = re.findall(r'go_to\("([^"]+)"\)', ref)
    options = eval(re.search(r"options = (\[.*\])", ref).group(1))  # noqa: S307 - our own reference text
    person = rooms[0].split("'")[0]
    return task, person, rooms[0], rooms[1], options


def _open_world_program(ask: str, report: str) -> str:
    task, person, office, room, options = _open_world()
    lines = [f"go_to({office!r})", f"answer = {ask}", f"go_to({room!r})", *report.split("\n")]
    values = {"person": person, "options": options, "question": f"Which do you like best: {', '.join(options)}?"}
    return _fenced("def task_program():\n" + "\n".join("    " + line.format(**values) for line in lines))


OFFER_AND_REPORT = {
    "choices_only_in_the_question": ("ask({person!r}, {question!r}, ['yes', 'no'])", "say({person!r} + ' likes ' + answer)"),
    "every_choice_in_one_option": ("ask({person!r}, 'Which one?', [', '.join({options!r})])",
                                   "say({person!r} + ' likes ' + answer)"),
    "report_every_option_at_once": ("ask({person!r}, 'Which one?', {options!r})",
                                    "say({person!r} + ' likes ' + ' or '.join({options!r}))"),
    "report_each_option_in_turn": ("ask({person!r}, 'Which one?', {options!r})",
                                   "for option in {options!r}:\n    say({person!r} + ' likes ' + option)"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OFFER_AND_REPORT))
def test_offer_and_report_attacks_score_nothing(name, two_sandboxes):
    task = _open_world()[0]
    verdict = verify(task, [_open_world_program(*OFFER_AND_REPORT[name])], executor=RobotExecutor(two_sandboxes[0]))
    assert verdict.reward <= 0.0 and not verdict.passed  # nothing but token penalties


def test_an_honest_report_after_a_greeting_still_passes(two_sandboxes):
    task = _open_world()[0]
    program = _open_world_program("ask({person!r}, 'Which one?', {options!r})",
                                  "say('Hello there')\nsay({person!r} + ' chose the ' + answer)")  # fmt: skip
    assert verify(task, [program], executor=RobotExecutor(two_sandboxes[0])).passed


def test_choices_in_the_question_with_yes_no_options_are_not_offered():
    # Conditional task: the person's answer picks yes (the choice is in the question); the robot then fetches the
    # right object from what it knows about each state. Only `ask`'s options count as offering the choice.
    task = _task("conditional")
    truth = task.ground_truth
    for state_json, spec in zip(truth["states"], truth["checks"], strict=True):
        state = WorldState.from_json(state_json)
        office = next(iter(state.people))
        person, [chosen] = next(iter(state.people[office].items()))
        store, (x, y) = next((room, items) for room, items in state.objects.items() if len(items) == 2)
        robot = Robot(state)
        robot.go_to(office)
        robot.ask(person, f"Would you like {x} or {y}?", ["yes", "no"])
        robot.go_to(store)
        robot.pick(chosen)
        robot.go_to(office)
        robot.place(chosen)
        assert not holds(spec, robot.trace)


def test_a_pick_is_judged_by_the_object_taken_not_the_words_used():
    task = _task("manipulation")
    truth = task.ground_truth
    state = WorldState.from_json(truth["states"][0])
    source = next(room for room, items in state.objects.items() if len(items) == 2)
    wanted, twin = state.objects[source]
    state.objects[source] = [twin, wanted]  # the look-alike first: "<twin> <wanted>" takes the twin
    robot = Robot(state)
    robot.go_to(source)
    robot.pick(f"{twin} {wanted}")
    spec = truth["checks"][0]
    robot.go_to(next(part[1]["at"] for part in spec[1:] if part[0] == "exists" and part[1]["call"] == "place"))
    robot.place(f"{twin} {wanted}")
    assert robot.held is None and not holds(spec, robot.trace)


def test_is_in_room_must_ask_about_the_object_itself():
    task = _task("exhaustive_search")
    truth = task.ground_truth
    spec, state = truth["checks"][0], WorldState.from_json(truth["states"][0])
    looks = [part for part in spec[1:] if part[0] == "at_first_visit" and part[2]["call"] == "is_in_room"]
    thing = looks[0][2].get("entity") or looks[0][2]["words"][0]
    robot = Robot(state)
    for _, room, _ in looks:
        robot.go_to(room)
        robot.is_in_room(f"{thing} or anything else")
    assert not any(holds(part, robot.trace) for part in looks)
    robot = Robot(state)
    for _, room, _ in looks:
        robot.go_to(room)
        robot.is_in_room(f"the {thing}")
    assert all(holds(part, robot.trace) for part in looks)


# ---- issue #34: the original's semantics must not open new ways to score --------------------------------------------
def test_one_go_to_naming_several_rooms_is_a_visit_to_one_room():
    # The location pattern is matched against the room the robot reached, not the words of the argument, so
    # `go_to("garage and kitchen")` (which reaches the garage) is no visit to the kitchen.
    state = WorldState(rooms=["hall", "garage", "kitchen"], start="hall")
    robot = Robot(state)
    robot.go_to("the garage and the kitchen")
    robot.say("hello")
    assert robot.location == "garage"
    assert not holds(["at_first_visit", "kitchen", {"call": "say"}], robot.trace)
    assert holds(["at_first_visit", "garage", {"call": "say"}], robot.trace)


def test_a_print_hides_what_follows_and_earns_nothing(two_sandboxes):
    # As in the original, a print ends the trace: printing first leaves nothing to judge.
    task = _task("action_location")
    executor = RobotExecutor(two_sandboxes[0])
    honest = verify(task, [_fenced(f"def task_program():\n{_body(task, 1)}")], executor=executor)
    printed = verify(task, [_fenced(f"def task_program():\n    print('start')\n{_body(task, 1)}")], executor=executor)
    assert honest.passed and printed.valid and printed.reward <= 0.0 and not printed.passed


def test_partial_credit_needs_a_passing_state(two_sandboxes):
    # The temporal component rewards nearly-right programs, but only once some state passes: right rooms in the
    # wrong order satisfy most conditions of every state and still earn nothing but penalties.
    task = _task("event_ordering")
    lines = extract(task.reference_actions[0]).code.splitlines()[1:]
    pairs = [lines[i : i + 2] for i in range(0, len(lines), 2)]
    swapped = "def task_program():\n" + "\n".join(line for pair in reversed(pairs) for line in pair)
    verdict = verify(task, [_fenced(swapped)], executor=RobotExecutor(two_sandboxes[0]))
    assert verdict.components["temporal"] > 0.5 and verdict.components["functional"] == 0.0
    assert verdict.reward <= 0.0 and not verdict.passed
    nothing = verify(task, ["I cannot do this."])
    assert nothing.reward <= verdict.reward  # giving up never beats trying


def test_keyword_calls_cannot_smuggle_extra_arguments(two_sandboxes):
    task = _task("action_location")
    code = "def task_program():\n    say(message='hi', thing='x')\n"
    verdict = verify(task, [_fenced(code)], executor=RobotExecutor(two_sandboxes[0]))
    assert not verdict.passed and verdict.reward <= 0.0 and "unexpected keyword" in verdict.feedback
