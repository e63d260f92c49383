"""What both isolations' children share inside the user's pytest process: the
plugin, putting a mutant in place (import hook, patch) and recording which code
each test ran. Never imports libcst, nor anything under
``metaeval.mutation.find``: this code shares a process with the user's tests."""
