"""How vgfc reads its inputs and writes its outputs, when either may be anything.

:mod:`vgfc.files.inputs` opens what vgfc reads (a regular file of a bounded size; never a FIFO,
a device or a symlink loop), :mod:`vgfc.files.outputs` writes what it makes (atomically, never
through anything but a regular file), :mod:`vgfc.files.writers` names temporary files after
their writer, removes those a killed writer left and locks a folder while a group of outputs is
renamed into it, and :mod:`vgfc.files.interrupts` turns the signals that
end a command into :class:`~vgfc.files.interrupts.Interrupted` without cutting a rename short.
Import from those modules.
"""
