"""The parent of a mutation run: the run's order and dispatch to an isolation
(``fork/``, ``subprocess/``), the status ladder, the result cache and the kept
coverage map, shards and executors. Starts pytest processes; runs no test itself."""
