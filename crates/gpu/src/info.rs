//! What `rxpipe info` reports about CUDA: whether the driver and NVRTC load, their versions and
//! the devices, found without ever calling into a library that is missing.

use std::fmt;

/// What `rxpipe info` reports about CUDA.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CudaInfo {
    pub driver_library: bool,
    pub nvrtc_library: bool,
    /// whether NCCL loads (the collectives that composite a frame drawn over several GPUs)
    pub nccl_library: bool,
    /// the driver's CUDA version, e.g. 13000
    pub driver_version: Option<i32>,
    pub nvrtc_version: Option<(i32, i32)>,
    pub devices: Vec<DeviceInfo>,
    /// why CUDA cannot be used, when it cannot
    pub problem: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceInfo {
    pub name: String,
    pub memory_bytes: usize,
    pub compute_capability: (i32, i32),
    /// peak DRAM bandwidth from the memory clock and bus width the driver reports
    pub memory_bandwidth_gb_s: Option<f64>,
}

impl CudaInfo {
    /// True when a device and NVRTC are present.
    pub fn usable(&self) -> bool {
        self.nvrtc_library && !self.devices.is_empty()
    }
}

impl fmt::Display for CudaInfo {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let yn = |b: bool| if b { "found" } else { "not found" };
        writeln!(f, "CUDA driver library: {}", yn(self.driver_library))?;
        if let Some(v) = self.driver_version {
            writeln!(f, "CUDA driver version: {}.{}", v / 1000, (v % 1000) / 10)?;
        }
        writeln!(f, "NVRTC library:       {}", yn(self.nvrtc_library))?;
        if let Some((a, b)) = self.nvrtc_version {
            writeln!(f, "NVRTC version:       {a}.{b}")?;
        }
        for (i, d) in self.devices.iter().enumerate() {
            writeln!(
                f,
                "device {i}: {} ({:.1} GiB, compute capability {}.{}, peak DRAM bandwidth {})",
                d.name,
                d.memory_bytes as f64 / (1u64 << 30) as f64,
                d.compute_capability.0,
                d.compute_capability.1,
                d.memory_bandwidth_gb_s
                    .map_or("unknown".into(), |b| format!("{b:.0} GB/s"))
            )?;
        }
        writeln!(f, "NCCL library:        {}", yn(self.nccl_library))?;
        if let Some(p) = &self.problem {
            writeln!(f, "CUDA unavailable:    {p}")?;
        }
        Ok(())
    }
}

/// Probes the CUDA driver and NVRTC. Never panics: each library is checked for before any call
/// into it, and every call's error becomes `problem`.
pub fn probe() -> CudaInfo {
    let mut info = CudaInfo {
        // SAFETY: only tries to open the shared library by its candidate names.
        driver_library: unsafe { cudarc::driver::sys::is_culib_present() },
        nvrtc_library: unsafe { cudarc::nvrtc::sys::is_culib_present() },
        // SAFETY: as above.
        nccl_library: unsafe { cudarc::nccl::sys::is_culib_present() },
        ..Default::default()
    };
    if info.nvrtc_library {
        info.nvrtc_version = std::panic::catch_unwind(|| {
            let (mut major, mut minor) = (0i32, 0i32);
            // SAFETY: the NVRTC library is present; both pointers are valid.
            let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
            (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
        })
        .ok()
        .flatten();
    }
    if !info.driver_library {
        info.problem = Some("the CUDA driver library (libcuda) is not installed".into());
        return info;
    }
    let devices = std::panic::catch_unwind(|| -> Result<(i32, Vec<DeviceInfo>), String> {
        use cudarc::driver::{result, sys};
        result::init().map_err(|e| format!("cuInit failed: {e}"))?;
        let mut version = 0i32;
        // SAFETY: the driver library is loaded and initialised; `version` is a valid pointer.
        unsafe { sys::cuDriverGetVersion(&mut version) };
        let n = result::device::get_count().map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for i in 0..n {
            let dev = result::device::get(i).map_err(|e| e.to_string())?;
            let name = result::device::get_name(dev).unwrap_or_else(|_| "unknown".into());
            // SAFETY: `dev` is a valid device handle from cuDeviceGet.
            let mem = unsafe { result::device::total_mem(dev) }.unwrap_or(0);
            let attr = |a| unsafe { result::device::get_attribute(dev, a) }.unwrap_or(0);
            let cc = (
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
            );
            let clock_khz = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
            let bus_bits =
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
            out.push(DeviceInfo {
                name,
                memory_bytes: mem,
                compute_capability: cc,
                // double data rate: two transfers per clock
                memory_bandwidth_gb_s: (clock_khz > 0 && bus_bits > 0)
                    .then(|| 2.0 * clock_khz as f64 * 1e3 * (bus_bits as f64 / 8.0) / 1e9),
            });
        }
        Ok((version, out))
    });
    match devices {
        Ok(Ok((v, d))) => {
            info.driver_version = Some(v);
            if d.is_empty() {
                info.problem = Some("the CUDA driver reports no device".into());
            }
            info.devices = d;
        }
        Ok(Err(e)) => info.problem = Some(e),
        Err(_) => info.problem = Some("the CUDA driver library could not be used".into()),
    }
    if info.problem.is_none() && !info.nvrtc_library {
        info.problem = Some("the NVRTC library (libnvrtc) is not installed".into());
    }
    info
}
