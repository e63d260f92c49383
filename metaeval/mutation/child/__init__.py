"""What both isolations' children share inside the user's pytest process: putting
a mutant in place (import hook, patch), recording which code each test ran, the
live functions a swap or a probe gives new code to. The plugin that starts either
child side is ``metaeval.mutation.plugin``, above both isolations. Never imports
libcst, nor anything under ``metaeval.mutation.find``: this code shares a process
with the user's tests."""
