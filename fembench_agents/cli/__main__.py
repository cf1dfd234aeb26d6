"""`python -m fembench_agents.cli`."""

from fembench_agents.cli import main

main()
