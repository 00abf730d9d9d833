"""Training: trajectory data, refinement, SFT and REINFORCE++ RL (install the `train` extra)."""
