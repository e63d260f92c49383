"""What runs inside the user's pytest process: the plugin, the warm process and
its forked children, putting mutants in place. Never imports libcst, nor
anything under ``metaeval.mutation.find``: this code shares a process with the
user's tests."""
