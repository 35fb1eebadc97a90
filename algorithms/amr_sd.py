"""AMR-SD: self-distillation through a reflection bottleneck, as sparse token-level advantage modulation (arXiv
2605.18529, no public code; docs/algorithms-more.md).

Why: a self-teacher that sees the reference solution can copy it, and its token preferences then reward copying
rather than reasoning; AMR-SD lets the policy write itself a short hint from diagnostics (verdict, a correct peer or
the reference) with the answer removed, and only where that hint changes a token's probability a lot (causal
information gain above a threshold) does the token's advantage grow. The environment reward stays the signal.

[PAPER] the reflection bottleneck, CIG, the asymmetric ReLU-gated threshold, temporal annealing. [INFERRED] (all the
numbers and forms): h_i = the policy's own reply (greedy, <= 64 tokens) to a reflection prompt holding
the question, the rollout's verdict and one correct peer of its group (else the reference answer), with the gold
answer string removed; CIG_t = sg[log pi(y_t | x, h_i, y_<t) - log pi(y_t | x, y_<t)];
g_t = ReLU(CIG_t - tau+) if A_i > 0, ReLU(-CIG_t - tau-) if A_i < 0; A_t = A_i (1 + lam min(g_t, 2)) (amplifies
only, never flips a sign); tau+ 0.5, tau- 1.0, lam 0.5 -> 0 linearly over `decay_steps` (default: the run's steps).
Our choices: the hint is placed between the prompt and the response tokens (as CEPO's teacher input), on the first
generated turn only; the reference is the rollout env's ground truth (the trainer's oracle path).

`AmrSdTrainer` (algorithm name `amr_sd`) applies it over any estimator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .cepo import OracleMixin, first_generated_turn, hinted_logprobs, with_turn_edits
from .trainer import Trainer

REFLECT_PROMPT = (
    "You answered a problem. Write a short hint (one or two sentences) that would help you solve it better next "
    "time. Do not state the final answer.\n\nProblem:\n{question}\n\nYour answer:\n{answer}\n\nVerdict: {verdict}\n\n"
    "{peer}"
)
HIDDEN = "[answer withheld]"


def amr_lambda(step: int, lam0: float = 0.5, decay_steps: int = 100) -> float:
    """lam0 decayed linearly to 0 at `decay_steps` (0-based training-step index)."""
    return lam0 * max(0.0, 1.0 - step / decay_steps)


def amr_factor(
    cig: np.ndarray, adv: float, lam: float, tau_pos: float = 0.5, tau_neg: float = 1.0, cap: float = 2.0
) -> np.ndarray:
    """1 + lam min(g_t, cap), g_t the ReLU-gated CIG on A's side (all ones for A = 0)."""
    cig = np.asarray(cig, dtype=np.float64)
    if adv > 0:
        g = np.maximum(cig - tau_pos, 0.0)
    elif adv < 0:
        g = np.maximum(-cig - tau_neg, 0.0)
    else:
        g = np.zeros_like(cig)
    return 1.0 + lam * np.minimum(g, cap)


def strip_answer(hint: str, answer: str) -> tuple[str, int]:
    """The hint with every occurrence of the gold answer replaced (case-insensitive), and how many there were.
    A purely numeric answer is matched as a whole number only (so "12" does not hide the "12" in "120")."""
    if not answer.strip():
        return hint, 0
    core = re.escape(answer.strip())
    pattern = rf"(?<![\d.]){core}(?![\d])" if re.fullmatch(r"-?\d+(\.\d+)?", answer.strip()) else core
    return re.subn(pattern, HIDDEN, hint, flags=re.IGNORECASE)


class AmrSdSettings(BaseModel):
    """`algorithm: {name: amr_sd, ...}` keys."""

    model_config = ConfigDict(extra="forbid")

    lam0: float = Field(0.5, ge=0.0)
    decay_steps: int | None = Field(None, ge=1)  # None: the run's `steps`
    tau_pos: float = Field(0.5, ge=0.0)
    tau_neg: float = Field(1.0, ge=0.0)
    cap: float = Field(2.0, gt=0.0)
    hint_tokens: int = Field(64, ge=1)


class AmrSdTrainer(OracleMixin, Trainer):
    """The shared trainer with AMR-SD's hint-gated token amplification on the estimator's advantages."""

    settings_model = AmrSdSettings

    def reflection(self, ep: Episode, peers: Sequence[Episode]) -> tuple[str, int]:
        """The policy's own hint for episode `ep` (answer stripped) and the number of answer strings removed."""
        turn = ep.turns[-1]
        question = next((m.content for m in ep.turns[0].observation if m.role == "user"), "")
        right = next((p for p in peers if p.passed and p is not ep), None)
        gold = self.oracle_answer(ep)
        peer = f"A correct solution:\n{right.turns[-1].action}" if right else f"Reference answer: {gold}"
        verdict = "correct" if ep.passed else "incorrect"
        if ep.verdict is not None and ep.verdict.feedback:
            verdict += f" ({ep.verdict.feedback})"
        text = REFLECT_PROMPT.format(question=question, answer=turn.action, verdict=verdict, peer=peer)
        ids = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        s: AmrSdSettings = self.settings  # type: ignore[assignment]
        with torch.no_grad():
            out = self.model.generate(**ids, max_new_tokens=s.hint_tokens, do_sample=False, pad_token_id=self.pad_id)
        hint = self.tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True).strip()
        return strip_answer(hint, gold)

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        s: AmrSdSettings = self.settings  # type: ignore[assignment]
        lam = amr_lambda(self.step, s.lam0, s.decay_steps or self.cfg.steps)
        todo = [
            (i, t)
            for i, ep in enumerate(episodes)
            if adv.keep[i] and adv.episode[i] != 0 and (t := first_generated_turn(ep)) is not None
        ]
        if lam == 0 or not todo:
            return {**super().update(episodes, adv), "amr/lambda": lam}
        groups: dict[str, list[Episode]] = {}
        for ep in episodes:
            groups.setdefault(ep.group_id, []).append(ep)
        self.model.eval()
        hints, leaks = [], 0
        for i, _ in todo:
            hint, n = self.reflection(episodes[i], groups[episodes[i].group_id])
            hints.append(self.encode_hint(hint) if hint else [])
            leaks += n
        turns = [episodes[i].turns[t] for i, t in todo]
        prompts = [list(turn.prompt_token_ids or []) for turn in turns]
        resp = [list(turn.token_ids or []) for turn in turns]
        kw = {
            "pad_id": self.pad_id,
            "token_budget": self.cfg.micro_batch_tokens,
            "autocast": self.cfg.model.bf16_autocast,
        }
        with_hint = hinted_logprobs(self.model, prompts, hints, resp, **kw)
        plain = hinted_logprobs(self.model, prompts, [[] for _ in todo], resp, **kw)
        cig = [a - b for a, b in zip(with_hint, plain, strict=True)]
        factors = [
            amr_factor(c, float(adv.episode[i]), lam, s.tau_pos, s.tau_neg, s.cap)
            for (i, _), c in zip(todo, cig, strict=True)
        ]
        edits = {i: (t, partial(np.multiply, f)) for (i, t), f in zip(todo, factors, strict=True)}
        out = super().update(episodes, with_turn_edits(episodes, adv, edits))
        flat = np.concatenate(factors)
        out.update(
            {
                "amr/lambda": lam,
                "amr/cig_abs_mean": float(np.abs(np.concatenate(cig)).mean()),
                "amr/active_share": float((flat > 1.0).mean()),
                "amr/factor_max": float(flat.max()),
                "amr/answer_leaks_removed": float(leaks),
                "amr/hint_tokens": float(np.mean([len(h) for h in hints])),
            }
        )
        return out
