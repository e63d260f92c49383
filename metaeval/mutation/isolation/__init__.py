"""What both isolations (``fork/``, ``subprocess/``) are given and give back: the
run's options and the errors that void it (``options``), what a run leaves besides
its results (``ran``), and a child's outcome turned into a status by one ladder
(``outcome``). Values and pure functions; starts no process."""
