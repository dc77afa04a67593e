"""The book's instrument on a real engine: Hugging Face transformers' continuous
batching on CPU (``ContinuousBatchingManager``), with a tiny random-weight Llama.

- ``internals``: the library versions the probe was written against, and the check that
  every engine internal it wraps is still there with the signature it expects;
- ``config``: the knobs of one real-engine run (a dataclass, in the run's key);
- ``probe``: wraps the engine's step and writes what it sees in the book's raw-log
  contract (DESIGN.md, section 1), so ``analysis`` reads it unchanged;
- ``replay``: the book's seeded workload, replayed into the running manager, one run per
  fresh process (``python -m engine.real``).

torch and transformers are imported only by these modules, and only when a run is made.
"""
