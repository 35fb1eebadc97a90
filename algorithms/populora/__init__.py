"""PopuLoRA (METHODS.md section 3): population self-play of LoRA teachers and students on the AZR envs.

`estimator` holds task-relative REINFORCE++ (advantages whitened per task-type x role batch), `operators` the
weight-space mutations M1-M5 and crossovers X1-X5 on low-rank factors, `selection` the keep/mutate/replace schedule.
"""
