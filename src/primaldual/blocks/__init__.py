"""Per-method blocks shared by a solver and its engines: SDCA's threaded pass
(:mod:`.sdca_threads`), which CoCoA+'s in-process engine also runs."""
