"""Package discovery for the root-folder layout (envs/, agents/, ... installed as rlvr_gym.envs, ...)."""

from setuptools import find_packages, setup

ROOT_FOLDERS = {"envs": "rlvr_gym.envs", "agents": "rlvr_gym.agents", "algorithms": "rlvr_gym.algorithms",
                "sandboxes": "rlvr_gym.sandboxes"}

packages = find_packages(include=["rlvr_gym", "rlvr_gym.*"])
for folder, name in ROOT_FOLDERS.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

setup(packages=packages)
