"""The published studies, one module each, each declaring itself as PLUGIN = plugins.Study(...)
(pxq.core.plugins): `pxq study NAME` and `pxq reproduce` find them. What a study runs with and
returns (Context, Outcome) and the helpers studies share are pxq.experiments.studykit."""
