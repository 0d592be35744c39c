/**
 * What a platform and preset name say about a node. Nebius names presets by their resources
 * (`8gpu-128vcpu-1600gb`, `48vcpu-192gb`) and GPU quotas by accelerator family, not platform
 * (`gpu-h200-sxm` draws on `compute.instance.gpu.h200`): docs.nebius.com/compute/virtual-machines/types
 * and /compute/resources/quotas-limits.
 */
const GPU_PRESET = /^(\d+)gpu-(\d+)vcpu-(\d+)gb$/;
const CPU_PRESET = /^(\d+)vcpu-(\d+)gb$/;
const GPU_PLATFORM = /^gpu-([a-z0-9]+)(-[a-z0-9-]+)?$/;

export interface PresetShape {
  gpus: number;
  vcpus: number;
  memoryGib: number;
}

/** A preset's resources, or undefined when the name is not one the quota can be computed from. */
export function parsePreset(preset: string): PresetShape | undefined {
  const g = GPU_PRESET.exec(preset);
  if (g) return { gpus: Number(g[1]), vcpus: Number(g[2]), memoryGib: Number(g[3]) };
  const c = CPU_PRESET.exec(preset);
  if (c) return { gpus: 0, vcpus: Number(c[1]), memoryGib: Number(c[2]) };
  return undefined;
}

/** `gpu-h200-sxm` -> `h200`; undefined for a platform that is not a GPU platform. */
export function gpuFamily(platform: string): string | undefined {
  return GPU_PLATFORM.exec(platform)?.[1];
}

/** SXM boards sit on an NVSwitch: the fabric-capable shape, and the one the operator race concerns. */
export const isSxm = (platform: string): boolean => /^gpu-[a-z0-9]+-sxm(-[a-z0-9]+)?$/.test(platform);

/** RTX PRO 6000, including an explicitly resolved zonal platform such as `gpu-rtx6000-a`. */
export const isRtxPro6000 = (platform: string): boolean => /^gpu-rtx6000(-[a-z0-9]+)?$/.test(platform);

/** The RTX presets the rendering profile supports: the single-GPU default and the 8-GPU PCIe shape. */
export const RTX_SINGLE_GPU_PRESET = "1gpu-24vcpu-218gb";
export const RTX_RENDERING_PRESETS = [RTX_SINGLE_GPU_PRESET, "8gpu-192vcpu-1744gb"] as const;
