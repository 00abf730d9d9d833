"""Maps the top-level envs/ and training/ folders into the sttgym namespace (see pyproject.toml)."""

from setuptools import find_packages, setup

# sttgym_arena: the package `vf-eval sttgym-arena` imports by name (the verifiers adapter's entry).
MAPPED = {"sttgym": "sttgym", "sttgym.envs": "envs", "sttgym.training": "training", "sttgym_arena": "sttgym_arena"}

packages = []
for package, folder in MAPPED.items():
    packages.append(package)
    packages += [f"{package}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=MAPPED,
      package_data={"": ["*.yaml", "*.json", "*.txt"], "sttgym": ["data/*.jsonl", "data/manifests/*.json", "viewer/assets/*"],
                    "sttgym.training": ["configs/accelerate/*.yaml"]})
