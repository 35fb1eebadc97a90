"""rlvr-gym: multi-turn Gymnasium envs with real verifiers, LLM agents and RL algorithms for RLVR."""

from .agent import Agent, AgentStep, EpisodeContext, Policy, make_agent
from .env import AnswerEnv, Env, StepResult, feedback
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
    Message,
    PolicyError,
    SamplingParams,
    Task,
    ToolCall,
    Turn,
    Usage,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "Agent", "AgentStep", "AnswerEnv", "ContentPart", "Criterion", "Env", "EnvInfo", "Episode", "EpisodeContext",
    "EpisodeError", "EnvUnavailable", "ErrorKind", "Generation", "GenerationRequest", "Message", "Policy", "PolicyError", "Rubric",
    "SamplingParams", "StepResult", "Task", "ToolCall", "Turn", "Usage", "Verdict", "env_info", "feedback",
    "list_envs", "load_plugins", "make", "make_agent", "register",
]
