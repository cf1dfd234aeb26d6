"""Fresh PDE cases, never published: seeded draws from each family's space
(docs/fresh_instances.md). grammar.py: the solution's terms; families.py: the
coefficient and parameter ranges; draw.py: ids, draws, checks, redraws;
output.py: the folder they are written to."""
