"""RELEX: rank-r SVD extrapolation of checkpoints, by hand, on synthetic trajectories, and on a real tiny run."""

from __future__ import annotations

import json
import math

import pytest
import torch

from rlvr_gym.algorithms.relex import distance, extrapolate_checkpoints, extrapolate_tensor, main


def test_exact_rank_one_quadratic_hand_values():
    """Deltas u * c_t with u = [0.6, 0.8] (unit) and c = [1, 4, 9] at t = [1, 2, 3] (rank 1, not linear in t).
    SVD: v = ±u, coefficients ±[1, 4, 9]; least-squares line: slope = ((-1)(1 - 14/3) + (1)(9 - 14/3)) / 2 = 4,
    intercept = 14/3 - 4*2 = -10/3; c(4) = 16 - 10/3 = 38/3 -> delta = 38/3 * u = [7.6, 10.1333].
    With window W = 2 the line goes through (2, 4), (3, 9): c(4) = 14 -> [8.4, 11.2]."""
    u = torch.tensor([0.6, 0.8], dtype=torch.float64)
    deltas = torch.stack([c * u for c in (1.0, 4.0, 9.0)])
    torch.testing.assert_close(extrapolate_tensor(deltas, [1, 2, 3], 4), torch.tensor([7.6, 38 / 3 * 0.8]).double())
    torch.testing.assert_close(extrapolate_tensor(deltas, [1, 2, 3], 4, window=2), torch.tensor([8.4, 11.2]).double())


def test_rank_one_drops_the_minor_direction():
    """Deltas [t, 0] + [0, e_t] with e = [+0.1, -0.1, +0.1, -0.1] at t = 1..4: the top direction is (almost) x, so
    the rank-1 prediction at t = 10 is ~[10, -0.07] (the y-part only through the direction's slight tilt,
    sum t e_t = -0.2), while rank 2 fits both coordinates' lines exactly: y(t) = -0.04 t + 0.1 -> -0.3."""
    deltas = torch.tensor([[1, 0.1], [2, -0.1], [3, 0.1], [4, -0.1]], dtype=torch.float64)
    pred = extrapolate_tensor(deltas, [1, 2, 3, 4], 10)
    assert pred[0] == pytest.approx(10.0, abs=0.02) and -0.1 < float(pred[1]) < -0.03
    full = extrapolate_tensor(deltas, [1, 2, 3, 4], 10, rank=2)
    assert full[0] == pytest.approx(10.0, abs=1e-9) and full[1] == pytest.approx(-0.04 * 10 + 0.1, abs=1e-9)


def test_first_checkpoint_is_the_origin_and_shapes_survive():
    """Checkpoints theta_t = theta_1 + (t - 1) * D at steps 1, 3, 5 (origin step 1): the prediction at step 9 is
    theta_1 + 4 D for every tensor, in its own shape and dtype."""
    theta1 = {"a": torch.ones(2, 3), "b": torch.zeros(4)}
    d = {"a": torch.full((2, 3), 0.5), "b": torch.arange(4.0)}
    hist = [{k: theta1[k] + (s - 1) / 2 * d[k] for k in theta1} for s in (1, 3, 5)]
    pred = extrapolate_checkpoints(hist, [1, 3, 5], 9)
    for k in theta1:
        assert pred[k].shape == theta1[k].shape and pred[k].dtype == theta1[k].dtype
        torch.testing.assert_close(pred[k], theta1[k] + 4 * d[k])


def _trajectory(kind: str, steps: int = 10, d: int = 400, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    drift = torch.randn(d, generator=g) / math.sqrt(d)
    walk = torch.zeros(d)
    out = []
    for t in range(1, steps + 1):
        noise = torch.randn(d, generator=g) / math.sqrt(d)
        if kind == "drift":  # linear drift plus independent per-checkpoint noise (RELEX's premise)
            theta = t * drift + 0.3 * noise
        else:  # a random walk of the same step size with a weak drift (what short CPU runs look like)
            walk = walk + noise
            theta = 0.2 * t * drift + walk
        out.append({"w": theta.reshape(20, 20)})
    return out


def test_beats_the_last_checkpoint_only_when_drift_dominates():
    """Observe steps 1..6, predict step 10. Drift + noise: the rank-1 line is much closer to step 10 than step 6
    is. A random walk with weak drift: the rank-1 prediction is farther than step 6 (the regime measured on the
    short CPU runs, see docs/algorithms-more.md)."""
    for kind, better in (("drift", True), ("walk", False)):
        traj = _trajectory(kind)
        pred = extrapolate_checkpoints(traj[:6], list(range(1, 7)), 10)
        d_pred, d_last = distance(pred, traj[9]), distance(traj[5], traj[9])
        assert (d_pred < 0.5 * d_last) if better else (d_pred > d_last), (kind, d_pred, d_last)


def test_cli_on_a_real_tiny_run(length_env_id, tiny_model, tokenizer, tmp_path, capsys):
    """A real 5-step LoRA run (tiny random Llama, checkpoint every step), then the tool: predicts step 5 from
    steps 1..4, writes a file that loads back as the model's adapter, and reports both distances."""
    from rlvr_gym.algorithms.checkpoint import load_adapter_weights
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.algorithms.trainer import Trainer

    cfg = load_config(
        {
            "run_dir": str(tmp_path / "run"),
            "seed": 0,
            "steps": 5,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
            "rollout": {"env": length_env_id, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 6},
            "eval": {"num_tasks": 1, "every": 100, "max_new_tokens": 2},
            "optim": {"lr": 1e-3},
            "micro_batch_tokens": 256,
            "checkpoint_every": 1,
            "keep_checkpoints": 0,
        }
    )
    trainer = Trainer(cfg, model=tiny_model, tokenizer=tokenizer)
    trainer.run(resume=False)
    out = tmp_path / "pred"
    assert main([str(cfg.run_dir), "--target", "5", "--out", str(out), "--check", "5"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["observed_steps"] == [1, 2, 3, 4] and report["tensors"] > 0
    assert math.isfinite(report["dist_pred"]) and report["dist_last_observed"] > 0
    load_adapter_weights(trainer.model, out)
