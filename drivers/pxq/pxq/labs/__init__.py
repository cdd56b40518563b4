"""The teaching labs' checkers, one module each, each declaring itself as PLUGIN = plugins.Lab(...)
(pxq.core.plugins). The machinery that builds, runs, confines and grades a student's copy is
pxq.teaching (harness, sandbox, grading)."""
