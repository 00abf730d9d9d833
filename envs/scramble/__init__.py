"""ScrambleTool: a simulated terminal with obfuscated tools and a five-task curriculum."""
