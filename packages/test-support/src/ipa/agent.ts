/**
 * A stand-in for ironic-python-agent (IPA) 9.4.3, the agent ramdisk of the 2023.1 series that
 * matches the Ironic here (21.4.x, Debian 12). ironic-python-agent itself cannot run here: it
 * needs a machine of its own with a real disk. The stand-in speaks IPA's wire format, from
 * its source at tag 9.4.3 (SOURCES.md beside this file names each file):
 *
 * - to Ironic: the lookup (`GET /v1/lookup?addresses=…`, ironic_api_client.py `_do_lookup`) and
 *   heartbeats (`POST /v1/heartbeat/{uuid}` with callback_url, agent_token, agent_version;
 *   agent.py `IronicPythonAgentHeartbeater`, the same jittered interval and forced heartbeat
 *   after each asynchronous command);
 * - from Ironic: IPA's command API (api/app.py: `GET /v1/commands/`, `GET /v1/commands/<id>`,
 *   `POST /v1/commands/?wait=&agent_token=`), the command results of extensions/base.py
 *   (id, command_name, command_status, command_error, command_result; errors serialised as
 *   errors.py's RESTError: type, code, message, details), and the commands Ironic 21.4's
 *   `direct` deploy sends: deploy.get_deploy_steps, deploy.execute_deploy_step (write_image,
 *   erase_devices_metadata), standby.get_partition_uuids, standby.power_off, standby.run_image,
 *   standby.sync, image.install_bootloader and log.collect_system_logs.
 *
 * write_image really downloads the image over HTTP, hashes it with the algorithm Ironic names
 * (os_hash_algo/os_hash_value, else the md5 `checksum`), fails with IPA's ImageChecksumError on a
 * mismatch, writes it to the machine's disk (./disk.ts) and adds the config drive partition.
 * Not modelled: images other than raw (qemu-img conversion), partition images, GPT disks, software
 * RAID, UEFI boot entries (efibootmgr), inspection, cleaning steps, fast track and TLS.
 */
import { createHash, getHashes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { gunzipSync, gzipSync } from "node:zlib";
import { MIB, type Disk } from "./disk.ts";

/** The IPA release modelled (the agent_version heartbeats carry). */
export const IPA_VERSION = "9.4.3";
/** ironic_api_client.py: the highest API version IPA 9.4.3 knows (agent_verify_ca), and the token's. */
const MAX_KNOWN_VERSION: [number, number] = [1, 68];
const AGENT_TOKEN_VERSION: [number, number] = [1, 62];
/** hardware.py GenericHardwareManager: HARDWARE_MANAGER_NAME / HARDWARE_MANAGER_VERSION. */
const HARDWARE_MANAGER_VERSION = { generic_hardware_manager: "1.1" };
/** The device the agent installs to (hardware.py get_os_install_device); the machine's only disk. */
export const INSTALL_DEVICE = "/dev/sda";
/** partition_utils.py MAX_CONFIG_DRIVE_SIZE_MB. */
const MAX_CONFIG_DRIVE_SIZE_MB = 64;

export interface AgentOptions {
  /** The kernel command line the ramdisk was booted with (ipa-api-url, ipa-* options). */
  params: Record<string, string>;
  /** The machine's address: the agent listens and advertises there (ipa-listen-port, 9999). */
  address: string;
  /** The machine's NIC MAC addresses (the lookup's `addresses`). */
  macs: string[];
  disk: Disk;
  /** How the firmware booted the ramdisk (hardware.py get_boot_info current_boot_mode). */
  bootMode: "bios" | "uefi";
  /** The machine powers itself off (`poweroff`) or reboots (`reboot`). */
  shutdown(how: "poweroff" | "reboot"): void;
}

/** A command result as IPA serialises it (extensions/base.py BaseCommandResult). */
export interface CommandResult {
  id: string;
  command_name: string;
  command_status: "RUNNING" | "SUCCEEDED" | "FAILED" | "CLEAN_VERSION_MISMATCH";
  command_error: RestError | null;
  command_result: unknown;
}

/** errors.py RESTError.serialize() (encoding.py for ironic-lib exceptions has the same keys). */
export interface RestError {
  type: string;
  code: number;
  message: string;
  details: string;
}

export interface Agent {
  /** http://<address>:<port>, the callback_url it heartbeats. */
  url: string;
  /** Set once the lookup succeeded. */
  nodeUuid: string | undefined;
  /** Every command Ironic sent, as the agent reports it (the order of GET /v1/commands/). */
  commands: CommandResult[];
  /** "<method> <path>" of every request Ironic made to the agent, in order. */
  requests: string[];
  heartbeats: number;
  /** Log lines (what IPA would log; collect_system_logs returns them). */
  log: string[];
  /** Stops heartbeating and closes the API (the machine powered off). */
  stop(): Promise<void>;
}

class IpaError extends Error {
  constructor(
    readonly type: string,
    readonly errorMessage: string,
    readonly details: string,
    readonly code = 500,
  ) {
    // errors.py RESTError.__str__
    super(`${errorMessage}: ${details}`);
  }
  serialize(): RestError {
    return { type: this.type, code: this.code, message: this.errorMessage, details: this.details };
  }
}

// errors.py, one constructor per class the modelled paths raise.
const errors = {
  commandExecution: (details: string) => new IpaError("CommandExecutionError", "Command execution failed", details),
  invalidCommand: (details: string) => new IpaError("InvalidCommandError", "Invalid command", details, 400),
  invalidCommandParams: (details: string) =>
    new IpaError("InvalidCommandParamsError", "Invalid command parameters", details, 400),
  notFound: (details: string) => new IpaError("RequestedObjectNotFoundError", "Not found", details, 404),
  agentIsBusy: (command: string) => new IpaError("AgentIsBusy", "Agent is busy", `executing command ${command}`, 409),
  imageDownload: (imageId: string, msg: string) =>
    new IpaError("ImageDownloadError", "Error downloading image", `Download of image ${imageId} failed: ${msg}`),
  imageChecksum: (location: string, imageId: string, checksum: string, calculated: string) =>
    new IpaError(
      "ImageChecksumError",
      "Error verifying image checksum",
      `Image failed to verify against checksum. location: ${location}; image ID: ${imageId}; image checksum: ${checksum}; verification checksum: ${calculated}`,
    ),
  hardwareManagerMethodNotFound: (method: string) =>
    new IpaError(
      "HardwareManagerMethodNotFound",
      "No HardwareManager found to handle method",
      `Could not find method: ${method}`,
    ),
  versionMismatch: (agent: unknown, node: unknown) =>
    new IpaError(
      "VersionMismatch",
      "Hardware managers version mismatch, reload agent with correct version",
      `Current versions: ${pyRepr(agent)}, versions used by ironic: ${pyRepr(node)}`,
      409,
    ),
  restError: (details: string) => new IpaError("RESTError", "An error occurred", details),
};

/**
 * ironic-lib's InstanceDeployFailure raised inside an asynchronous command: AsyncCommandResult.run
 * wraps anything that is not a RESTError in CommandExecutionError(str(e)).
 */
const instanceDeployFailure = (msg: string) => errors.commandExecution(msg);

/** The agent's deploy steps (hardware.py GenericHardwareManager.get_deploy_steps at 9.4.3). */
const DEPLOY_STEPS = [
  { step: "erase_devices_metadata", priority: 0, interface: "deploy", reboot_requested: false },
  {
    step: "apply_configuration",
    priority: 0,
    interface: "raid",
    reboot_requested: false,
    argsinfo: {
      raid_config: { description: "The RAID configuration to apply.", required: true },
      delete_existing: {
        description:
          "Setting this to 'True' indicates to delete existing RAID configuration prior to creating the new configuration. Default value is 'True'.",
        required: false,
      },
    },
  },
  { step: "write_image", priority: 0, interface: "deploy", reboot_requested: false },
  {
    step: "inject_files",
    priority: 0,
    interface: "deploy",
    reboot_requested: false,
    argsinfo: {
      files: {
        description:
          "Files to inject, a list of file structures with keys: 'path' (path to the file), 'partition' (partition specifier), 'content' (base64 encoded string), 'mode' (new file mode) and 'dirmode' (mode for the leaf directory, if created). Merged with the values from node.properties[inject_files].",
        required: false,
      },
      verify_ca: {
        description: "Whether to verify TLS certificates. Global agent options are used by default.",
        required: false,
      },
    },
  },
];

type Command = (params: Record<string, unknown>) => unknown;

interface ImageInfo {
  id: string;
  urls: string[];
  disk_format?: string | null;
  stream_raw_images?: boolean;
  checksum?: string;
  os_hash_algo?: string;
  os_hash_value?: string;
  node_uuid?: string;
  image_type?: string;
  configdrive?: string;
}

const intParam = (params: Record<string, string>, name: string, dflt: number) =>
  params[name] !== undefined ? Number(params[name]) : dflt;

/** Boots the agent: looks the node up, then serves its API and heartbeats (agent.py `run`). */
export function bootAgent(opts: AgentOptions): Agent {
  const p = opts.params;
  const apiUrl = (p["ipa-api-url"] ?? "").replace(/\/+$/, "");
  const listenPort = intParam(p, "ipa-listen-port", 9999);
  const advertisePort = intParam(p, "ipa-advertise-port", 9999);
  const conf = {
    lookupTimeoutS: intParam(p, "ipa-lookup-timeout", 300),
    lookupIntervalS: intParam(p, "ipa-lookup-interval", 1),
    downloadRetries: intParam(p, "ipa-image-download-connection-retries", 9),
    downloadRetryIntervalS: intParam(p, "ipa-image-download-connection-retry-interval", 10),
    globalRequestId: p["ipa-global-request-id"],
  };
  const url = `http://${opts.address}:${advertisePort}`;
  const startedAt = Date.now() / 1000;

  let stopped = false;
  let server: Server | undefined;
  let listening: Promise<void> | undefined;
  let ironicVersion: [number, number] | undefined;
  let agentToken: string | undefined;
  let heartbeatTimeoutS = 300;
  let forced = false;
  let wake: (() => void) | undefined;
  /** standby.py StandbyExtension state. */
  let cachedImageId: string | undefined;
  let partitionUuids: Record<string, string> | undefined;
  const results = new Map<string, CommandResult & { done: Promise<void> }>();

  const agent: Agent = {
    url,
    nodeUuid: undefined,
    commands: [],
    requests: [],
    heartbeats: 0,
    log: [],
    stop: async () => {
      stopped = true;
      wake?.();
      // A listen still under way finishes first, or its server would outlive the stop.
      await listening?.catch(() => {});
      if (server) {
        const s = server;
        server = undefined;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      }
    },
  };
  const log = (line: string) => agent.log.push(`${new Date().toISOString()} ${line}`);

  // ---- talking to Ironic (ironic_api_client.py) ----

  const ironic = async (method: string, path: string, version: [number, number] | undefined, body?: unknown) => {
    const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json" };
    if (version) headers["X-OpenStack-Ironic-API-Version"] = `${version[0]}.${version[1]}`;
    if (conf.globalRequestId) headers["X-OpenStack-Request-ID"] = conf.globalRequestId;
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, text: await res.text() };
  };
  const minVersion = (a: [number, number], b: [number, number]): [number, number] =>
    a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]) ? a : b;
  /** `_get_ironic_api_version`: the API's default (newest) version, from `GET /`. */
  const apiVersion = async (): Promise<[number, number]> => {
    if (ironicVersion) return ironicVersion;
    try {
      const r = await ironic("GET", "/", undefined);
      const [major, minor] = (JSON.parse(r.text) as { default_version: { version: string } }).default_version.version
        .split(".")
        .map(Number);
      ironicVersion = [major!, minor!];
    } catch (err) {
      log(`An error occurred while attempting to discover the available Ironic API versions: ${String(err)}`);
      return [1, 31]; // MIN_IRONIC_VERSION
    }
    return ironicVersion;
  };

  /** `lookup_node`: retried with random exponential waits until `ipa-lookup-timeout`. */
  const lookup = async (): Promise<boolean> => {
    const deadline = Date.now() + conf.lookupTimeoutS * 1000;
    let lockPause = 0;
    for (let attempt = 0; !stopped; attempt++) {
      try {
        const version = minVersion(await apiVersion(), AGENT_TOKEN_VERSION);
        const q = new URLSearchParams({ addresses: opts.macs.join(",") });
        const r = await ironic("GET", `/v1/lookup?${q}`, version);
        if (r.status === 200) {
          const content = JSON.parse(r.text) as {
            node: { uuid: string };
            config: { heartbeat_timeout: number; agent_token?: string };
          };
          // agent.py process_lookup_data
          agent.nodeUuid = content.node.uuid;
          heartbeatTimeoutS = content.config.heartbeat_timeout;
          const token = content.config.agent_token;
          if (token && token.length >= 32) agentToken = token;
          log(`Lookup succeeded, node UUID is ${agent.nodeUuid}`);
          return true;
        }
        if (r.status === 409) {
          lockPause = lockPause === 0 ? 5 : lockPause === 5 ? 10 : 30;
          log(`Ironic has responded with a conflict, signaling the node is locked. We will wait ${lockPause} seconds`);
          await sleep(lockPause * 1000);
        } else {
          log(`Failed looking up node with addresses ${opts.macs.join(",")} at ${apiUrl}: ${r.status} ${r.text}`);
        }
      } catch (err) {
        log(`Error detected while attempting to perform lookup with ${apiUrl}, retrying. Error: ${String(err)}`);
      }
      if (Date.now() > deadline) break;
      // tenacity.wait_random_exponential(min=lookup_interval, max=60)
      const waitS = Math.max(conf.lookupIntervalS, Math.random() * Math.min(60, 2 ** attempt));
      await sleep(waitS * 1000);
    }
    log("Could not look up node info. Check logs for details.");
    return false;
  };

  const heartbeat = async () => {
    const version = await apiVersion();
    const data: Record<string, unknown> = { callback_url: url };
    if (minVersion(version, AGENT_TOKEN_VERSION) === AGENT_TOKEN_VERSION) data.agent_token = agentToken;
    data.agent_version = IPA_VERSION;
    const r = await ironic("POST", `/v1/heartbeat/${agent.nodeUuid}`, minVersion(MAX_KNOWN_VERSION, version), data);
    if (r.status !== 202) throw new Error(`Error ${r.status}: ${r.text}`);
  };

  /** IronicPythonAgentHeartbeater.run: the first heartbeat at once, then every 0.3–0.6 × timeout. */
  const heartbeater = async () => {
    let interval = 0;
    let previous = 0;
    while (!stopped) {
      const now = Date.now() / 1000;
      if (now > previous + interval || (forced && now > previous + 5)) {
        try {
          await heartbeat();
          agent.heartbeats++;
          forced = false;
          previous = Date.now() / 1000;
        } catch (err) {
          log(`error sending heartbeat to ${apiUrl}: ${String(err)}`);
        }
        interval = heartbeatTimeoutS * (0.3 + Math.random() * 0.3);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(interval, 5) * 1000).unref();
      });
    }
  };

  // ---- commands (extensions/*.py) ----

  /** AsyncCommandResult: runs in the background, then forces a heartbeat. */
  const asyncCommand =
    (name: string, fn: Command, validator?: (params: Record<string, unknown>) => void): Command =>
    (params) => {
      validator?.(params);
      const r: CommandResult = {
        id: randomUUID(),
        command_name: name,
        command_status: "RUNNING",
        command_error: null,
        command_result: null,
      };
      const done = (async () => {
        await Promise.resolve();
        try {
          let result = await fn(params);
          if (typeof result === "string") result = { result: `${name}: ${result}` };
          r.command_result = result ?? null;
          r.command_status = "SUCCEEDED";
          log(`Asynchronous command ${name} completed: ${JSON.stringify(removeLargeKeys(result))}`);
        } catch (err) {
          const e = err instanceof IpaError ? err : errors.commandExecution(String(err));
          if (e.type === "VersionMismatch") r.command_status = "CLEAN_VERSION_MISMATCH";
          else r.command_status = "FAILED";
          r.command_error = e.serialize();
          log(`Command failed: ${name}, error: ${e.message}`);
        } finally {
          forced = true;
          wake?.();
        }
      })();
      return Object.assign(r, { done });
    };
  const syncCommand =
    (name: string, fn: Command): Command =>
    (params) => {
      let result = fn(params);
      if (typeof result === "string") result = { result };
      return {
        id: randomUUID(),
        command_name: name,
        command_status: "SUCCEEDED",
        command_error: null,
        command_result: result ?? null,
      };
    };

  /** standby.py `_validate_image_info`. */
  const validateImageInfo = (params: Record<string, unknown>) => {
    const info = (params.image_info ?? {}) as Record<string, unknown>;
    for (const field of ["id", "urls"])
      if (!(field in info)) throw errors.invalidCommandParams(`Image is missing '${field}' field.`);
    if (!Array.isArray(info.urls) || info.urls.length === 0)
      throw errors.invalidCommandParams("Image 'urls' must be a list with at least one element.");
    const md5 = info.checksum !== undefined && info.checksum !== null;
    if (md5 && (typeof info.checksum !== "string" || !info.checksum))
      throw errors.invalidCommandParams("Image 'checksum' must be a non-empty string.");
    const osHash = Boolean(info.os_hash_algo || info.os_hash_value);
    if (osHash) {
      if (typeof info.os_hash_algo !== "string" || !info.os_hash_algo)
        throw errors.invalidCommandParams("Image 'os_hash_algo' must be a non-empty string.");
      if (typeof info.os_hash_value !== "string" || !info.os_hash_value)
        throw errors.invalidCommandParams("Image 'os_hash_value' must be a non-empty string.");
    }
    if (!md5 && !osHash)
      throw errors.invalidCommandParams(
        "Image checksum is not available, either the 'checksum' field or the 'os_hash_algo' and 'os_hash_value' fields pair must be set for image verification.",
      );
  };

  /** standby.py `_download_with_proxy`: a GET, retried on connection errors and 5xx. */
  const openDownload = async (info: ImageInfo, url: string): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      let status: number | undefined;
      try {
        const res = await fetch(url, {
          signal: AbortSignal.timeout(intParam(p, "ipa-image-download-connection-timeout", 60) * 1000),
        });
        status = res.status;
        if (res.status !== 200) {
          const body = await res.text();
          const headers = JSON.stringify(Object.fromEntries(res.headers));
          throw errors.imageDownload(
            info.id,
            `Received status code ${res.status} from ${url}, expected 200. Response body: ${body} Response headers: ${headers}`,
          );
        }
        return res;
      } catch (err) {
        if (attempt >= conf.downloadRetries || (status !== undefined && status < 500)) throw err;
        log(`Unable to connect to ${url}, retrying. Error: ${String(err)}`);
        await sleep(conf.downloadRetryIntervalS * 1000);
      }
    }
  };

  /**
   * standby.py `ImageDownload` + `_download_image`: hash while downloading, verify, and retry the
   * whole download on a download or checksum error. Returns the image's bytes.
   */
  const downloadImage = async (info: ImageInfo): Promise<Buffer> => {
    const location = `/tmp/${info.id}`; // _image_location: tempfile.gettempdir()/<id>
    for (let attempt = 0; ; attempt++) {
      try {
        let algo: string;
        let expected: string;
        if (info.os_hash_algo && getHashes().includes(info.os_hash_algo)) {
          algo = info.os_hash_algo;
          expected = info.os_hash_value ?? "";
        } else if (info.checksum) {
          algo = "md5";
          expected = info.checksum;
        } else {
          throw errors.restError(
            `Unable to verify image ${info.id} with available checksums. Please make sure the specified 'os_hash_algo' (currently ${info.os_hash_algo}) is supported by this ramdisk, or provide a md5 checksum via the 'checksum' field`,
          );
        }
        const details: string[] = [];
        let res: Response | undefined;
        for (const u of info.urls) {
          log(`Attempting to download image from ${u}`);
          try {
            res = await openDownload(info, u);
            break;
          } catch (err) {
            details.push(`URL: ${u}; Error: ${err instanceof IpaError ? err.details : String(err)}`);
          }
        }
        if (!res) throw errors.imageDownload(info.id, details.join("\n "));
        const hash = createHash(algo);
        const chunks: Buffer[] = [];
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            hash.update(chunk);
            chunks.push(Buffer.from(chunk));
          }
        } catch (err) {
          throw errors.imageDownload(info.id, `Unable to write image to ${location}. Error: ${String(err)}`);
        }
        const checksum = hash.digest("hex");
        if (checksum !== expected) throw errors.imageChecksum(location, info.id, expected, checksum);
        const image = Buffer.concat(chunks);
        log(`Image downloaded from ${location}. Transferred ${image.length} bytes.`);
        return image;
      } catch (err) {
        const retriable =
          err instanceof IpaError && (err.type === "ImageDownloadError" || err.type === "ImageChecksumError");
        if (!retriable || attempt >= conf.downloadRetries) throw err;
        log(`Image download failed, ${attempt} of ${conf.downloadRetries}: ${String(err)}`);
        await sleep(conf.downloadRetryIntervalS * 1000);
      }
    }
  };

  /** partition_utils.py `create_config_drive_partition` on an MBR disk. */
  const createConfigDrivePartition = (nodeUuid: string, configdrive: string) => {
    if (/^https?:\/\//.test(configdrive))
      throw instanceDeployFailure(`Config drive at a URL is not modelled by the stand-in (node ${nodeUuid})`);
    let iso: Buffer;
    try {
      iso = gunzipSync(Buffer.from(configdrive, "base64"));
    } catch (err) {
      throw instanceDeployFailure(
        `Encountered error while decompressing and writing config drive for node ${nodeUuid}. Error: ${String(err)}`,
      );
    }
    const sizeMb = Math.ceil(iso.length / MIB);
    if (sizeMb > MAX_CONFIG_DRIVE_SIZE_MB)
      throw instanceDeployFailure(
        `Config drive size exceeds maximum limit of 64MiB. Size of the given config drive is ${sizeMb} MiB for node ${nodeUuid}.`,
      );
    const table = opts.disk.partitionTable();
    // get_labelled_partition(device, 'config-2'): an existing config drive is reused.
    let part = table?.partitions.find((x) => opts.disk.isoVolumeId(x.startBytes) === "config-2");
    if (!part) {
      if (table?.kind !== "msdos")
        throw instanceDeployFailure(`Config drive on a ${table?.kind ?? "blank"} disk is not modelled by the stand-in`);
      if (table.partitions.length > 3)
        throw instanceDeployFailure(
          `Config drive cannot be created for node ${nodeUuid}. Disk (${INSTALL_DEVICE}) uses MBR partitioning and already has ${table.partitions.length} primary partitions.`,
        );
      // parted mkpart primary fat32 -64MiB -0
      part = opts.disk.addPrimaryPartitionAtEnd(MAX_CONFIG_DRIVE_SIZE_MB, 0x0c);
    }
    opts.disk.write(part.startBytes, iso); // dd
    log(`Config drive for node ${nodeUuid} written to ${INSTALL_DEVICE}${part.number}`);
  };

  /** standby.py `prepare_image` for a whole disk image. Returns its result message. */
  const prepareImage = async (params: Record<string, unknown>): Promise<string> => {
    const info = params.image_info as ImageInfo;
    let configdrive = params.configdrive as string | undefined | null;
    if (configdrive === undefined || configdrive === null) configdrive = info.configdrive;
    if (info.image_type === "partition")
      throw errors.commandExecution("Partition images are not modelled by the stand-in");
    if (cachedImageId !== info.id) {
      const image = await downloadImage(info);
      // disk_utils.get_and_validate_image_format: the format inspector; only raw is modelled.
      if (image.subarray(0, 4).equals(Buffer.from([0x51, 0x46, 0x49, 0xfb])))
        throw errors.commandExecution("qcow2 images (qemu-img convert) are not modelled by the stand-in");
      opts.disk.destroyMetadata();
      opts.disk.write(0, image);
      partitionUuids = {};
      cachedImageId = info.id;
      log(`Image ${info.id} written to device ${INSTALL_DEVICE}`);
    }
    // _validate_partitioning
    const table = opts.disk.partitionTable();
    if (!table)
      throw instanceDeployFailure(
        "Unable to find a valid partition table on the disk after writing the image. The image may be corrupted. Error: unrecognised disk label",
      );
    if (table.partitions.length === 0)
      throw instanceDeployFailure(`No partitions found on the device ${INSTALL_DEVICE} after writing the image.`);
    if (configdrive) createConfigDrivePartition(info.node_uuid ?? "local", configdrive);
    // _fix_up_partition_uuids: the disk identifier (hexdump -s 440 -n 4) as the root uuid
    partitionUuids = { ...(partitionUuids ?? {}), "root uuid": opts.disk.partitionTable()!.diskIdentifier };
    return `image (${info.id}) written to device ${INSTALL_DEVICE} root_uuid=${partitionUuids["root uuid"]}`;
  };

  /** hardware.py dispatch_to_managers for the GenericHardwareManager's deploy steps. */
  const deployStep = async (name: string, args: Record<string, unknown>): Promise<unknown> => {
    switch (name) {
      case "write_image":
        validateImageInfo(args);
        // GenericHardwareManager.write_image: prepare_image's command result.
        return { result: `prepare_image: ${await prepareImage(args)}` };
      case "erase_devices_metadata":
        opts.disk.destroyMetadata();
        return null;
      default:
        if (DEPLOY_STEPS.some((s) => s.step === name))
          throw errors.commandExecution(`Deploy step ${name} is not modelled by the stand-in`);
        throw errors.hardwareManagerMethodNotFound(name);
    }
  };

  const extensions: Record<string, Record<string, Command>> = {
    deploy: {
      get_deploy_steps: syncCommand("get_deploy_steps", () => ({
        deploy_steps: { GenericHardwareManager: DEPLOY_STEPS },
        hardware_manager_version: HARDWARE_MANAGER_VERSION,
      })),
      execute_deploy_step: asyncCommand("execute_deploy_step", async (params) => {
        const step = params.step as { step?: string; args?: Record<string, unknown> } | undefined;
        const version = params.deploy_version;
        if (
          version !== undefined &&
          version !== null &&
          JSON.stringify(version) !== JSON.stringify(HARDWARE_MANAGER_VERSION)
        )
          throw errors.versionMismatch(HARDWARE_MANAGER_VERSION, version);
        if (!step || !("step" in step))
          throw errors.commandExecution(`Malformed deploy_step, no "step" key: ${JSON.stringify(step)}`);
        const kwargs = { ...params, ...(step.args ?? {}) };
        delete kwargs.step;
        delete kwargs.deploy_version;
        const result = await deployStep(step.step!, kwargs);
        return { deploy_result: result, deploy_step: step };
      }),
    },
    standby: {
      prepare_image: asyncCommand("prepare_image", prepareImage, validateImageInfo),
      get_partition_uuids: syncCommand("get_partition_uuids", () => {
        if (partitionUuids === undefined)
          log("No partition UUIDs recorded yet, prepare_image has to be called before get_partition_uuids");
        return partitionUuids ?? {};
      }),
      sync: syncCommand("sync", () => null),
      power_off: asyncCommand("power_off", async () => {
        log("Powering off system");
        // The reply goes out first; the machine goes down right after (`poweroff`).
        setTimeout(() => opts.shutdown("poweroff"), 50).unref();
        return null;
      }),
      run_image: asyncCommand("run_image", async () => {
        log("Rebooting system");
        setTimeout(() => opts.shutdown("reboot"), 50).unref();
        return null;
      }),
    },
    image: {
      /**
       * image.py `install_bootloader` for a whole disk image: in UEFI, efi_utils.manage_uefi finds
       * no EFI system partition on the disk models here (only MBR disks, whose partitions carry
       * no `esp` flag) and returns False; then grub2-install is skipped only when the root uuid is
       * unknown ('0x00000000' or None). Installing GRUB2 is not modelled: that path fails.
       */
      install_bootloader: asyncCommand("install_bootloader", async (params) => {
        const rootUuid = params.root_uuid as string | null | undefined;
        if (opts.bootMode === "uefi") log("No efi partition found on device " + INSTALL_DEVICE);
        if (rootUuid === "0x00000000" || rootUuid === null || rootUuid === undefined) {
          log("Not using grub2-install since root UUID is not provided. Assuming a whole disk image");
          return null;
        }
        throw errors.commandExecution(
          `Installing GRUB2 boot loader to device ${INSTALL_DEVICE} failed: grub2-install is not modelled by the stand-in`,
        );
      }),
    },
    log: {
      collect_system_logs: syncCommand("collect_system_logs", () => ({
        system_logs: gzipSync(tar({ journal: Buffer.from(agent.log.join("\n") + "\n") })).toString("base64"),
      })),
    },
  };

  /** extensions/base.py ExecuteCommandMixin.execute_command. */
  const executeCommand = (name: string, params: Record<string, unknown>): CommandResult & { done?: Promise<void> } => {
    const parts = name.split(".");
    if (parts.length < 2) throw errors.invalidCommand("Command name must be of the form <extension>.<name>");
    const [ext, ...rest] = parts;
    const cmd = rest.join(".");
    const last = [...results.values()].at(-1);
    if (last && last.command_status === "RUNNING") throw errors.agentIsBusy(last.command_name);
    const extension = extensions[ext!];
    if (!extension) throw errors.notFound(`Extension with id ${ext} not found.`);
    const fn = extension[cmd];
    if (!fn) throw errors.invalidCommand(`Unknown command: ${cmd}`);
    let result: CommandResult & { done?: Promise<void> };
    try {
      result = fn(params) as CommandResult & { done?: Promise<void> };
    } catch (err) {
      if (err instanceof IpaError && err.code === 400) throw err; // InvalidContentError
      const e = err instanceof IpaError ? err : errors.commandExecution(String(err));
      result = {
        id: randomUUID(),
        command_name: name,
        command_status: "FAILED",
        command_error: e.serialize(),
        command_result: null,
      };
    }
    results.set(result.id, result as CommandResult & { done: Promise<void> });
    agent.commands.push(result);
    return result;
  };

  const serialize = (r: CommandResult): CommandResult => ({
    id: r.id,
    command_name: r.command_name,
    command_status: r.command_status,
    command_error: r.command_error,
    command_result: r.command_result,
  });

  // ---- the API (api/app.py) ----

  const handle = async (req: IncomingMessage, body: string): Promise<{ status: number; body: unknown }> => {
    const u = new URL(req.url ?? "/", url);
    const path = u.pathname.replace(/^\/v1(?=\/)/, "");
    const root = `${url}`;
    const version = {
      id: "v1",
      links: [
        { href: `${root}/v1/`, rel: "self" },
        { href: "https://docs.openstack.org/ironic-python-agent", rel: "describedby", type: "text/html" },
      ],
    };
    if (req.method === "GET" && u.pathname === "/")
      return {
        status: 200,
        body: {
          name: "OpenStack Ironic Python Agent API",
          description: "Ironic Python Agent is a provisioning agent for OpenStack Ironic",
          versions: [version],
          default_version: version,
        },
      };
    if (req.method === "GET" && path === "/status")
      return { status: 200, body: { started_at: startedAt, version: IPA_VERSION } };
    if (req.method === "GET" && path === "/commands/")
      return { status: 200, body: { commands: [...results.values()].map(serialize) } };
    if (req.method === "GET" && path.startsWith("/commands/")) {
      const r = results.get(path.slice("/commands/".length));
      if (!r) throw errors.notFound(`Command Result with id ${path.slice("/commands/".length)} not found.`);
      if (u.searchParams.get("wait")?.toLowerCase() === "true") await r.done;
      return { status: 200, body: serialize(r) };
    }
    if (req.method === "POST" && path === "/commands/") {
      let parsed: { name?: unknown; params?: unknown };
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        return {
          status: 400,
          body: { faultcode: "Client", faultstring: "400 Bad Request: Failed to decode JSON object" },
        };
      }
      if (
        typeof parsed.name !== "string" ||
        !parsed.params ||
        typeof parsed.params !== "object" ||
        Array.isArray(parsed.params)
      )
        return {
          status: 400,
          body: { faultcode: "Client", faultstring: "400 Bad Request: Missing or invalid name or params" },
        };
      // Agent.validate_agent_token: the token Ironic handed out at lookup.
      if (u.searchParams.get("agent_token") !== agentToken)
        return { status: 401, body: { faultcode: "Client", faultstring: "401 Unauthorized: Token invalid." } };
      const r = executeCommand(parsed.name, parsed.params as Record<string, unknown>);
      if (u.searchParams.get("wait")?.toLowerCase() === "true") await r.done;
      return { status: 200, body: serialize(r) };
    }
    return {
      status: 404,
      body: {
        faultcode: "Client",
        faultstring:
          "404 Not Found: The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.",
      },
    };
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      agent.requests.push(`${req.method} ${new URL(req.url ?? "/", url).pathname}`);
      // Answers every request, the failing ones too: the promise never rejects.
      void handle(req, Buffer.concat(chunks).toString("utf8"))
        .catch((err: unknown) => {
          // Application.handle_exception / format_exception
          const e = err instanceof IpaError ? err : errors.commandExecution(String(err));
          return { status: e.code, body: { faultcode: e.code >= 500 ? "Server" : "Client", faultstring: e.message } };
        })
        .then((r) => {
          res.writeHead(r.status, { "Content-Type": "application/json" });
          res.end(JSON.stringify(r.body));
        });
    });
  };

  void (async () => {
    log(`Starting ironic-python-agent version: ${IPA_VERSION}`);
    if (!apiUrl) {
      log("Neither ipa-api-url nor inspection_callback_url found, please check your pxe append parameters.");
      return;
    }
    if (!(await lookup()) || stopped) return;
    server = createServer(listener);
    listening = new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      server!.listen(listenPort, opts.address, () => resolve());
    });
    try {
      await listening;
    } catch (err) {
      // IPA exits when its API cannot bind: it never heartbeats a callback URL nothing serves.
      log(`Failed to start the API: ${String(err)}`);
      server = undefined;
      return;
    }
    if (stopped) return;
    log(`Started API service on port ${listenPort}`);
    await heartbeater();
  })();

  return agent;
}

/** Python's repr() of JSON-like values, as IPA's messages format dicts with str.format. */
function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "string") return `'${v}'`;
  if (typeof v === "boolean") return v ? "True" : "False";
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `'${k}': ${pyRepr(x)}`)
      .join(", ")}}`;
  return String(v);
}

/** utils.py `remove_large_keys`: what IPA logs of a command's params and result. */
function removeLargeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(removeLargeKeys);
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, k === "configdrive" || k === "system_logs" ? "<...>" : removeLargeKeys(x)]),
    );
  return v;
}

/** A ustar archive of the given files (what IPA's collect_system_logs gzips and base64s). */
function tar(files: Record<string, Buffer>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, data] of Object.entries(files)) {
    const h = Buffer.alloc(512);
    h.write(name, 0, 100, "utf8");
    h.write("0000644\0", 100);
    h.write("0000000\0", 108);
    h.write("0000000\0", 116);
    h.write(data.length.toString(8).padStart(11, "0") + "\0", 124);
    h.write(
      Math.floor(Date.now() / 1000)
        .toString(8)
        .padStart(11, "0") + "\0",
      136,
    );
    h.write("        ", 148);
    h.write("0", 156);
    h.write("ustar\0", 257);
    h.write("00", 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
