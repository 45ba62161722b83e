name g737-osync-dio-size
summary 1 MiB written with O_SYNC, then with O_DIRECT|O_SYNC: the size stays
setup
mkdir /keep
create /keep/a
write /keep/a 0 24k
create /keep/b
write /keep/b 0 3k
run
create /t1
osync /t1 0 1M
create /t2
dwrite-osync /t2 0 1M
