"""The parent of a mutation run: the run's order and dispatch to an isolation
(``fork/``, ``subprocess/``), shards, manifests and executors, the time left.
Starts pytest processes; runs no test itself."""
