name newops
setup
create /f
write /f 0 16k
mkdir /d
run
falloc /f keep-size 16k 16k
falloc /f punch-hole 4k 4k
symlink /f /d/l
setxattr /f user.k v1
removexattr /f user.k
dwrite /f 0 4k
mwrite /f 1k 100
osync /f 8k 4k
dwrite-osync /f 0 4k
open h /f
unlink /f
fsync-fd h
fdatasync-fd h
close h
sync
