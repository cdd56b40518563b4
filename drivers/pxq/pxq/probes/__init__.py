"""The driver's side of the C++ probes: collective variability, channels and rank pairs, memory
(stride and bandwidth), and OSU-style runs."""
