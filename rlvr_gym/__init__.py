"""rlvr-gym: multi-turn Gymnasium envs with real verifiers, LLM agents and RL algorithms for RLVR."""

from . import vector as _vector  # noqa: F401  (Gymnasium's AsyncVectorEnv shared memory for our spaces)
from .agent import Agent, AgentStep, EpisodeContext, Policy, make_agent
from .env import AnswerEnv, Env, StepResult, feedback
from .family import ListSource, TaskSource, Trajectory, parse_task_id, stable_seed, task_id
from .registry import EnvInfo, env_info, list_envs, load_plugins, make, register
from .rubric import Criterion, Rubric
from .types import (
    ContentPart,
    EnvUnavailable,
    Episode,
    EpisodeError,
    ErrorKind,
    Generation,
    GenerationRequest,
    InfraError,
    Message,
    Outcome,
    PolicyError,
    SamplingParams,
    Task,
    TaskView,
    ToolCall,
    Turn,
    Usage,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "Agent", "AgentStep", "AnswerEnv", "ContentPart", "Criterion", "Env", "EnvInfo", "Episode", "EpisodeContext",
    "EpisodeError", "EnvUnavailable", "ErrorKind", "Generation", "GenerationRequest", "InfraError", "ListSource",
    "Message", "Outcome", "Policy", "PolicyError", "Rubric", "SamplingParams", "StepResult", "Task", "TaskSource",
    "TaskView", "ToolCall", "Trajectory", "Turn", "Usage", "Verdict", "env_info", "feedback", "list_envs",
    "load_plugins", "make", "make_agent", "parse_task_id", "register", "stable_seed", "task_id",
]
