from sttgym.cli import app

app()
