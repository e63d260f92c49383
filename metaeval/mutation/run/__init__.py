"""The parent of a mutation run: the runner for each isolation, the status
ladder, the result cache and the kept coverage map. Starts pytest processes;
runs no test itself."""
