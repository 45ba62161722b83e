name g764-unlink-fsync-fd
summary fsync through an fd of a file unlinked while open: it must stay gone
setup
mkdir /keep
create /keep/a
write /keep/a 0 24k
create /keep/b
write /keep/b 0 3k
mkdir /testdir
create /testdir/foo
run
open h /testdir/foo
unlink /testdir/foo
fsync-fd h
close h
