"""The harness: correctness checks, timing, plots and profiles, all driven by the registry."""
