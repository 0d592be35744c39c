/**
 * The test machine's disk: a sparse file of a fixed size that the IPA stand-in (./agent.ts) writes
 * an image to, as ironic-python-agent 9.4.3 writes one to /dev/sda. Only the MBR ("msdos")
 * partition table is read and changed; what IPA does with parted, partprobe, hexdump and dd on
 * such a disk is done here on the file (see SOURCES.md for each step's origin). GPT disks are
 * recognised (protective MBR, type 0xEE) but not changed.
 */
import { closeSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";

export const SECTOR = 512;
export const MIB = 1024 * 1024;

export interface MbrPartition {
  /** 1 to 4 (primary partitions only). */
  number: number;
  /** System id, e.g. 0x83 (Linux), 0x0b (FAT32), 0xee (GPT protective). */
  type: number;
  bootable: boolean;
  startBytes: number;
  sizeBytes: number;
}

export interface PartitionTable {
  kind: "msdos" | "gpt";
  /** The 4 bytes at offset 440 as `hexdump -s 440 -n 4 -e '"0x%08x"'` prints them (little endian). */
  diskIdentifier: string;
  partitions: MbrPartition[];
}

export class Disk {
  constructor(
    readonly path: string,
    readonly sizeBytes: number,
  ) {}

  /** Creates (or empties) the file at its full size; sparse, so it costs no space. */
  static create(path: string, sizeBytes: number): Disk {
    const fd = openSync(path, "w");
    try {
      ftruncateSync(fd, sizeBytes);
    } finally {
      closeSync(fd);
    }
    return new Disk(path, sizeBytes);
  }

  read(offset: number, length: number): Buffer {
    const buf = Buffer.alloc(length);
    const fd = openSync(this.path, "r");
    try {
      readSync(fd, buf, 0, length, offset);
    } finally {
      closeSync(fd);
    }
    return buf;
  }

  write(offset: number, data: Buffer): void {
    if (offset + data.length > this.sizeBytes)
      throw new Error(`write of ${data.length} bytes at ${offset} passes the end of the ${this.sizeBytes}-byte disk`);
    const fd = openSync(this.path, "r+");
    try {
      writeSync(fd, data, 0, data.length, offset);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * What `wipefs --force --all` and `sgdisk -Z` leave (IPA's destroy_disk_metadata): no
   * partition table signatures. Here: the MBR sector and the last 33 sectors (a backup GPT) zeroed.
   */
  destroyMetadata(): void {
    this.write(0, Buffer.alloc(SECTOR));
    this.write(this.sizeBytes - 33 * SECTOR, Buffer.alloc(33 * SECTOR));
  }

  /** The partition table, or undefined when sector 0 carries no 0x55AA boot signature. */
  partitionTable(): PartitionTable | undefined {
    const mbr = this.read(0, SECTOR);
    if (mbr[510] !== 0x55 || mbr[511] !== 0xaa) return undefined;
    const partitions: MbrPartition[] = [];
    for (let i = 0; i < 4; i++) {
      const e = mbr.subarray(446 + 16 * i, 446 + 16 * (i + 1));
      const type = e[4]!;
      const sectors = e.readUInt32LE(12);
      if (type === 0 || sectors === 0) continue;
      partitions.push({
        number: i + 1,
        type,
        bootable: e[0] === 0x80,
        startBytes: e.readUInt32LE(8) * SECTOR,
        sizeBytes: sectors * SECTOR,
      });
    }
    return {
      kind: partitions.some((p) => p.type === 0xee) ? "gpt" : "msdos",
      diskIdentifier: `0x${mbr.readUInt32LE(440).toString(16).padStart(8, "0")}`,
      partitions,
    };
  }

  /**
   * `parted -a optimal -s -- <disk> mkpart primary fat32 -64MiB -0` on an MBR disk: a primary
   * partition over the last 64 MiB (start aligned to 1 MiB, as parted's optimal alignment does),
   * in the first free slot. Returns it.
   */
  addPrimaryPartitionAtEnd(sizeMiB: number, type: number): MbrPartition {
    const table = this.partitionTable();
    if (!table || table.kind !== "msdos") throw new Error("not an msdos partition table");
    const used = new Set(table.partitions.map((p) => p.number));
    const number = [1, 2, 3, 4].find((n) => !used.has(n));
    if (number === undefined) throw new Error("no free primary partition slot");
    const startBytes = Math.floor((this.sizeBytes - sizeMiB * MIB) / MIB) * MIB;
    const sizeBytes = this.sizeBytes - startBytes;
    for (const p of table.partitions)
      if (p.startBytes + p.sizeBytes > startBytes)
        throw new Error(`partition ${p.number} overlaps the last ${sizeMiB} MiB`);
    const entry = Buffer.alloc(16);
    entry[0] = 0x00;
    // CHS fields: 0xFE 0xFF 0xFF ("use LBA"), as parted writes for partitions past the CHS range.
    entry.set([0xfe, 0xff, 0xff], 1);
    entry[4] = type;
    entry.set([0xfe, 0xff, 0xff], 5);
    entry.writeUInt32LE(startBytes / SECTOR, 8);
    entry.writeUInt32LE(sizeBytes / SECTOR, 12);
    this.write(446 + 16 * (number - 1), entry);
    return { number, type, bootable: false, startBytes, sizeBytes };
  }

  /** The ISO 9660 volume identifier of the file system at `offset`, if one is there. */
  isoVolumeId(offset: number): string | undefined {
    // ECMA-119 8.4: the primary volume descriptor is at sector 16 (of 2048 bytes):
    // type 1, "CD001", version 1; the volume identifier is bytes 40..71, space padded.
    const pvd = this.read(offset + 16 * 2048, 2048);
    if (pvd[0] !== 1 || pvd.toString("latin1", 1, 6) !== "CD001") return undefined;
    return pvd.toString("latin1", 40, 72).trimEnd();
  }
}

/**
 * A small raw whole-disk image as a test's "OS image": an MBR with one bootable Linux (0x83)
 * partition from 1 MiB to the end, the given disk identifier, and `content` in the partition.
 */
export function rawDiskImage(opts: { sizeBytes: number; diskIdentifier: number; content: Buffer }): Buffer {
  const img = Buffer.alloc(opts.sizeBytes);
  img.writeUInt32LE(opts.diskIdentifier, 440);
  const e = img.subarray(446, 462);
  e[0] = 0x80;
  e.set([0xfe, 0xff, 0xff], 1);
  e[4] = 0x83;
  e.set([0xfe, 0xff, 0xff], 5);
  e.writeUInt32LE(MIB / SECTOR, 8);
  e.writeUInt32LE((opts.sizeBytes - MIB) / SECTOR, 12);
  img[510] = 0x55;
  img[511] = 0xaa;
  opts.content.copy(img, MIB);
  return img;
}
