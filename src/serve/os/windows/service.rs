//! `inspect serve` as a Windows service (the `windows-service` crate speaks the service control
//! manager's protocol): `--install-service` registers `inspect.exe serve <options> --service`
//! as the service `hsinspect`, `--uninstall-service` stops and removes it, and `--service` is
//! what the manager runs: it reports "running" once listening and stops cleanly on the stop
//! (or shutdown) control, answering the requests in progress first.
//!
//! By hand, the same service is
//! `sc.exe create hsinspect binPath= "C:\path\inspect.exe serve --listen 0.0.0.0:9779 --service" start= auto`,
//! then `sc.exe start hsinspect`; `sc.exe stop hsinspect`, `sc.exe delete hsinspect`.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use windows_service::service::{
    ServiceAccess, ServiceControl, ServiceControlAccept, ServiceErrorControl, ServiceExitCode,
    ServiceInfo, ServiceStartType, ServiceState, ServiceStatus, ServiceType,
};
use windows_service::service_control_handler::{self, ServiceControlHandlerResult};
use windows_service::service_manager::{ServiceManager, ServiceManagerAccess};
use windows_service::{define_windows_service, service_dispatcher};

use crate::serve::{ServeArgs, Stop};

/// The service's name (`sc.exe start hsinspect`).
pub const SERVICE_NAME: &str = "hsinspect";

const DISPLAY_NAME: &str = "hsinspect serve (Prometheus exporter of JVMs)";

/// The arguments the installed service runs with: this command line's, less
/// `--install-service`, plus `--service`.
pub fn service_arguments(argv: &[OsString]) -> Vec<OsString> {
    argv.iter()
        .skip(1)
        .filter(|a| *a != "--install-service")
        .cloned()
        .chain(std::iter::once(OsString::from("--service")))
        .collect()
}

/// What an error of the service manager means, with the fix.
fn manager_error(e: windows_service::Error, what: &str) -> anyhow::Error {
    let denied = matches!(&e, windows_service::Error::Winapi(io) if io.raw_os_error() == Some(5));
    if denied {
        anyhow::anyhow!(
            "{what}: access denied: run inspect from an elevated prompt (Run as administrator)"
        )
    } else {
        anyhow::Error::new(e).context(what.to_string())
    }
}

/// `inspect serve --install-service ...`: registers the service, started automatically.
pub fn install() -> anyhow::Result<ExitCode> {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // The options are checked now, not when the service first starts.
    let parsed = crate::Cli::try_parse_from(
        std::iter::once(OsString::from("inspect")).chain(service_arguments(&argv)),
    )?;
    drop(parsed);
    let manager = ServiceManager::local_computer(
        None::<&str>,
        ServiceManagerAccess::CONNECT | ServiceManagerAccess::CREATE_SERVICE,
    )
    .map_err(|e| manager_error(e, "opening the service control manager"))?;
    let exe = std::env::current_exe().context("the path of inspect.exe")?;
    let info = ServiceInfo {
        name: SERVICE_NAME.into(),
        display_name: DISPLAY_NAME.into(),
        service_type: ServiceType::OWN_PROCESS,
        start_type: ServiceStartType::AutoStart,
        error_control: ServiceErrorControl::Normal,
        executable_path: exe.clone(),
        launch_arguments: service_arguments(&argv),
        dependencies: Vec::new(),
        account_name: None,
        account_password: None,
    };
    let service = manager
        .create_service(&info, ServiceAccess::CHANGE_CONFIG)
        .map_err(|e| manager_error(e, "creating the service hsinspect"))?;
    let _ = service.set_description(
        "Exports the PerfData counters of every HotSpot JVM on this host for Prometheus (inspect serve).",
    );
    eprintln!(
        "inspect: installed the service {SERVICE_NAME} ({} {}); start it with `sc.exe start {SERVICE_NAME}`",
        exe.display(),
        info.launch_arguments
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

/// `inspect serve --uninstall-service`: stops the service if it runs, then removes it.
pub fn uninstall() -> anyhow::Result<ExitCode> {
    let manager = ServiceManager::local_computer(None::<&str>, ServiceManagerAccess::CONNECT)
        .map_err(|e| manager_error(e, "opening the service control manager"))?;
    let service = manager
        .open_service(
            SERVICE_NAME,
            ServiceAccess::QUERY_STATUS | ServiceAccess::STOP | ServiceAccess::DELETE,
        )
        .map_err(|e| manager_error(e, "opening the service hsinspect"))?;
    if service
        .query_status()
        .is_ok_and(|s| s.current_state != ServiceState::Stopped)
    {
        let _ = service.stop();
        for _ in 0..100 {
            if service
                .query_status()
                .is_ok_and(|s| s.current_state == ServiceState::Stopped)
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    service
        .delete()
        .map_err(|e| manager_error(e, "removing the service hsinspect"))?;
    eprintln!("inspect: removed the service {SERVICE_NAME}");
    Ok(ExitCode::SUCCESS)
}

/// The parsed options, for the service's main (which the dispatcher calls with none).
static ARGS: OnceLock<ServeArgs> = OnceLock::new();

/// `inspect serve ... --service`: hands this process to the service control manager, which calls
/// [`service_main`] on a thread of its own; returns when the service has stopped.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let _ = ARGS.set(args.clone());
    service_dispatcher::start(SERVICE_NAME, ffi_service_main).context(
        "starting as a service (`--service` is for the service control manager: run `inspect serve` in a console instead)",
    )?;
    Ok(ExitCode::SUCCESS)
}

define_windows_service!(ffi_service_main, service_main);

fn service_main(_arguments: Vec<OsString>) {
    if let Err(e) = run_service() {
        eprintln!("inspect serve: {e:#}");
    }
}

fn status(state: ServiceState, accept: ServiceControlAccept, code: u32) -> ServiceStatus {
    ServiceStatus {
        service_type: ServiceType::OWN_PROCESS,
        current_state: state,
        controls_accepted: accept,
        exit_code: ServiceExitCode::Win32(code),
        checkpoint: 0,
        wait_hint: Duration::from_secs(5),
        process_id: None,
    }
}

fn run_service() -> anyhow::Result<()> {
    let args = ARGS.get().context("no options")?;
    let flag = Arc::new(AtomicBool::new(false));
    let addr: Arc<OnceLock<SocketAddr>> = Arc::new(OnceLock::new());
    let handler = {
        let flag = Arc::clone(&flag);
        let addr = Arc::clone(&addr);
        move |control| match control {
            ServiceControl::Stop | ServiceControl::Shutdown | ServiceControl::Preshutdown => {
                flag.store(true, Ordering::SeqCst);
                if let Some(a) = addr.get() {
                    crate::serve::http::wake(*a);
                }
                ServiceControlHandlerResult::NoError
            }
            ServiceControl::Interrogate => ServiceControlHandlerResult::NoError,
            _ => ServiceControlHandlerResult::NotImplemented,
        }
    };
    let status_handle = service_control_handler::register(SERVICE_NAME, handler)?;
    status_handle.set_service_status(status(
        ServiceState::StartPending,
        ServiceControlAccept::empty(),
        0,
    ))?;
    let (tx, rx) = mpsc::channel();
    // Running once listening: serve sends the address it bound.
    let reporter = {
        let addr = Arc::clone(&addr);
        let flag = Arc::clone(&flag);
        std::thread::spawn(move || {
            if let Ok(a) = rx.recv() {
                let _ = addr.set(a);
                // A stop that came before the address was known woke nothing: wake now.
                if flag.load(Ordering::SeqCst) {
                    crate::serve::http::wake(a);
                }
                let _ = status_handle.set_service_status(status(
                    ServiceState::Running,
                    ServiceControlAccept::STOP | ServiceControlAccept::SHUTDOWN,
                    0,
                ));
            }
        })
    };
    let result = crate::serve::serve(
        args,
        Stop::Service {
            flag: Arc::clone(&flag),
            addr: tx,
        },
    );
    let _ = reporter.join();
    let code = u32::from(result.is_err());
    status_handle.set_service_status(status(
        ServiceState::Stopped,
        ServiceControlAccept::empty(),
        code,
    ))?;
    result.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_runs_the_same_options() {
        let argv: Vec<OsString> = [
            "inspect.exe",
            "serve",
            "--listen",
            "0.0.0.0:9779",
            "--install-service",
            "--user",
            "svc",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(
            service_arguments(&argv),
            [
                "serve",
                "--listen",
                "0.0.0.0:9779",
                "--user",
                "svc",
                "--service"
            ]
            .iter()
            .map(OsString::from)
            .collect::<Vec<_>>()
        );
    }
}
