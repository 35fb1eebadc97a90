"""`rlvr/WebShop-v0`: the multi-turn text shop. A few lines on `rlvr_gym.Env`; judging lives in `verifier.py`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar

from rlvr_gym import Env, Message, StepResult, Task, Verdict
from rlvr_gym.env import feedback
from rlvr_gym.integrations.episode import ActionTool, text_tool

from . import floor
from .pages import page_url, render_html
from .shop import ShopSession, render_text
from .tasks import WebShopTasks
from .verifier import DEFAULT_MAX_TURNS, new_session, purchase_verdict, verify, wrong_answers

MODES = ("text", "text_rich", "html", "url")  # the original's four observation modes
HTML_SESSION = "episode"  # the session id in the html observation's links


class WebShopEnv(Env):
    """Search, browse and buy in a seeded catalog; reward = WebShop's goal reward of the purchase."""

    family = "webshop"
    max_turns = DEFAULT_MAX_TURNS
    step_timeout_s = 10.0
    verify_budget_s = 0.5
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = (
        text_tool(
            "act",
            "Take one shop action: search[keywords] or click[text of a clickable].",
            "action",
            "One action, for example 'search[usb cable]'.",
        ),
    )

    task_source = WebShopTasks  # split, seed and the catalog options of `tasks.ShopConfig`

    def __init__(self, *, observation_mode: str = "text", show_actions: bool = True, **kwargs: Any) -> None:
        if observation_mode not in MODES:
            raise ValueError(f"observation_mode must be one of {MODES}")
        super().__init__(**kwargs)
        self.observation_mode = observation_mode
        self.show_actions = show_actions
        self.session: ShopSession | None = None
        self.invalid = 0

    def observe(self, clicked: str = "", note: str = "") -> str:
        assert self.session is not None
        page = self.session.page()
        if self.observation_mode == "html":
            purchase = self.session.purchase
            text = render_html(page, HTML_SESSION, message=note, reward=purchase.reward if purchase else None)
            note = ""
        elif self.observation_mode == "url":
            text = page_url(self.session, HTML_SESSION)
        else:
            text = render_text(page, self.observation_mode, clicked)
        if self.show_actions and not self.session.done:
            keys = [e.label for e in page.clickables().values()]
            allowed = (["search[<keywords>]"] if page.has_search_bar else []) + [f"click[{k}]" for k in keys]
            text += "\n\nValid actions: " + " | ".join(allowed)
        return f"{note}\n\n{text}" if note else text

    def start(self, task: Task) -> list[Message]:
        self.session = new_session(task)
        self.invalid = 0
        return [Message(role="user", content=f"{task.prompt}\n\n{self.observe()}")]

    def respond(self, action: str) -> StepResult:
        assert self.session is not None
        outcome = self.session.act(action)
        self.invalid += not outcome.valid
        if outcome.done:
            verdict = purchase_verdict(self.session, self.turn, self.invalid)
            return StepResult(
                observation=feedback(self.observe()),
                reward=verdict.reward,
                terminated=True,
                verdict=verdict,
                valid_action=outcome.valid,
            )
        note = outcome.message if not outcome.valid else ""
        return StepResult(
            observation=feedback(self.observe(outcome.clicked, note)),
            valid_action=outcome.valid,
            info={"page": self.session.kind},
        )

    def truncation_verdict(self) -> Verdict:
        assert self.session is not None
        return purchase_verdict(self.session, self.turn, self.invalid)

    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        return verify(self.coerce_task(task), actions, self.max_turns)

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return wrong_answers(task, rng)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """WebShop's rule baseline and relatives (search the instruction, buy the k-th result): floor.py."""
        return floor.floor_policies(task)
