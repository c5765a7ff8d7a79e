# Shell helpers for lab guest scripts (busybox sh): `. /out/lab.sh`.
# Copied into every run's output folder by scripts/lab/run.

# dm_create NAME TABLE: create a device-mapper device and its /dev/mapper/NAME node
# (there is no udev in the guest to make it).
dm_create() {
    dmsetup create "$1" --table "$2" && dmsetup mknodes "$1" && [ -b "/dev/mapper/$1" ]
}

# nullb_create NAME SIZE_MB [ATTR=VALUE...]: a null_blk disk made through configfs,
# memory backed, 4 KiB blocks; the disk is /dev/NAME (named after its configfs folder).
nullb_create() {
    n=$1; mb=$2; shift 2
    modprobe null_blk nr_devices=0 || return 1
    d=/sys/kernel/config/nullb/$n
    mkdir "$d" || return 1
    echo "$mb" > "$d/size"; echo 1 > "$d/memory_backed"; echo 4096 > "$d/blocksize"
    for kv in "$@"; do echo "${kv#*=}" > "$d/${kv%%=*}" || return 1; done
    echo 1 > "$d/power"
    i=0; while [ ! -b "/dev/$n" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ -b "/dev/$n" ]
}

# scsi_debug_disk: the /dev/sdX of the scsi_debug disk (after modprobe scsi_debug ...).
scsi_debug_disk() {
    modprobe sd_mod
    i=0; while [ $i -lt 300 ]; do
        for b in /sys/block/sd*; do
            [ -e "$b/device/model" ] || continue
            [ "$(tr -d ' ' < "$b/device/model" 2>/dev/null)" = scsi_debug ] && { echo "/dev/${b##*/}"; return 0; }
        done
        sleep 0.1; i=$((i + 1))
    done
    return 1
}

# disk_by_serial SERIAL: the /dev node of the emulated disk with that serial (the host's
# scripts/lab/run names them LABNVME0, LABSATA0, LABBOT0, LABUAS0, ...).
disk_by_serial() {
    for b in /sys/block/*; do
        s=$(cat "$b/device/serial" 2>/dev/null || tail -c +5 "$b/device/vpd_pg80" 2>/dev/null)
        case $(echo "$s" | tr -d ' \0') in "$1") echo "/dev/${b##*/}"; return 0 ;; esac
    done
    return 1
}

# disk_transport NAME: how the disk /sys/block/NAME is attached: nvme, sata,
# usb-storage (USB bulk-only), uas (USB attached SCSI) or other.
disk_transport() {
    p=$(readlink -f "/sys/block/$1/device")
    case $p in
        */nvme/*) echo nvme ;;
        */usb*) intf=$(echo "$p" | sed -E 's#(.*/[0-9]+-[0-9.]+:[0-9]+\.[0-9]+)/.*#\1#')
                basename "$(readlink "$intf/driver")" ;;
        */ata[0-9]*) echo sata ;;
        *) echo other ;;
    esac
}

# disks_by_transport KIND: the /dev nodes of the disks attached that way.
disks_by_transport() {
    for b in /sys/block/*; do
        [ "$(disk_transport "${b##*/}")" = "$1" ] && echo "/dev/${b##*/}"
    done
}

# now: seconds since boot (the guest's monotonic clock), with centiseconds.
now() { cut -d' ' -f1 /proc/uptime; }
