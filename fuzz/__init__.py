"""Coverage-guided fuzz harnesses (atheris) and their runner (`python -m fuzz`)."""
