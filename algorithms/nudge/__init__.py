"""NudgeRL: strategy-hint ("context") rollouts, inter/intra advantage decomposition and context distillation.

Modules, one job each: `contexts` (where hints come from), `allocation` (which rollout gets which hint),
`estimator` (the `nudge` advantage), `distill` (the context-free log-likelihood term), `config`, `trainer`
(`NudgeTrainer`, a `Trainer` subclass), `compare` (NudgeRL vs GRPO runs + pass@k plot). See docs/nudge.md.
"""
