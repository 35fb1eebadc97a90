"""Robot-program family (RoboEval-style): a robot API simulator and temporal checks over call traces.

Status: the simulator (`simulator.py`) and the temporal checks (`temporal.py`) exist; the task generator,
sandboxed execution, verifier and envs are not built yet, so no env is registered.
"""
