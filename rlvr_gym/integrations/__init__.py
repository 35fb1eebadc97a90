"""Adapters that let existing trainers drive rlvr-gym envs: TRL, verl, verifiers and NeMo Gym.

Every adapter is a thin shim over one internal episode contract (`episode.py`): the trainer chooses the task and
supplies the model's text; the env and its verifier decide the verdict. No adapter accepts a reward, a ground
truth or a verdict from the trainer's side. Each trainer is an optional extra (`pip install rlvr-gym[trl]`, ...),
imported only by its own module, so `import rlvr_gym.integrations` stays light.
"""
