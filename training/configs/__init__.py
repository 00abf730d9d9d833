"""Bundled training run files (YAML): the paper's settings and tiny CPU ones."""
