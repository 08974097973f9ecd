//! WIT ↔ protocol conversion, written once for both sides.
//!
//! The host's bindings (wasmtime) and the SDK's (wit-bindgen) generate
//! different Rust types with the same names and fields from the same WIT
//! file. [`conversions!`](crate::conversions) expands to the conversion
//! functions for the types module it is given, so the host and the SDK's
//! native mode share one definition. The types must provide
//! `wire_name` and `from_wire` on `Capability` and `HookEvent`.

/// Expands to `timestamp`, `snapshot`, `initialize_request`, `tool_call`,
/// `command_call`, `hook_payload`, `manifest`, `manifest_from_dto`, `handshake` and
/// `command_result` for the WIT types module at the given path.
#[macro_export]
macro_rules! conversions {
    ($($wit:ident)::+) => {
        /// Unix seconds (possibly fractional) as a WIT timestamp.
        pub fn timestamp(unix_seconds: f64) -> $($wit)::+::Timestamp {
            let seconds = unix_seconds.floor();
            let nanoseconds = ((unix_seconds - seconds) * 1e9).round().min(999_999_999.0) as u32;
            $($wit)::+::Timestamp {
                seconds: seconds as i64,
                nanoseconds,
            }
        }

        /// A decoded `host.snapshot` as the WIT record the guest reads.
        pub fn snapshot(s: $crate::dto::SnapshotDto) -> $($wit)::+::RuntimeSnapshot {
            $($wit)::+::RuntimeSnapshot {
                observed_at: timestamp(s.observed_at),
                ipc_version: s.ipc_version,
                workspace: s.workspace.map(|w| $($wit)::+::WorkspaceInfo {
                    root_path: w.root_path,
                    is_git_repository: w.is_git_repository,
                    current_git_branch: w.current_git_branch,
                    dirty_file_count: w.dirty_file_count,
                    primary_languages: w.primary_languages,
                    core_version: w.core_version,
                }),
                pe_core: s.pe_core.map(|p| $($wit)::+::PeCoreInfo {
                    p_core_tokens: p.p_core_tokens,
                    e_core_objects: p.e_core_objects,
                    e_core_references: p.e_core_references,
                    last_eviction_trigger: p.last_eviction_trigger,
                    reasoning_effort: p.reasoning_effort,
                    background_task_count: p.background_task_count,
                }),
                context_state: s.context_state.map(|c| $($wit)::+::ContextStateInfo {
                    active_model_id: c.active_model_id,
                    total_token_usage: c.total_token_usage,
                    context_window_percentage: c.context_window_percentage,
                    is_compacted: c.is_compacted,
                    message_count: c.message_count,
                    recent_turns: c.recent_turns.map(|turns| {
                        turns
                            .into_iter()
                            .map(|t| $($wit)::+::TurnSummary {
                                turn_index: t.turn_index,
                                user_prompt_snippet: t.user_prompt_snippet,
                                assistant_response_snippet: t.assistant_response_snippet,
                                token_usage: t.token_usage,
                            })
                            .collect()
                    }),
                }),
                performance: s.performance.map(|p| $($wit)::+::PerformanceInfo {
                    time_to_first_token_ms: p.time_to_first_token_ms,
                    reasoning_duration_ms: p.reasoning_duration_ms,
                    tool_execution_duration_ms: p.tool_execution_duration_ms,
                    provider_latency_average_ms: p.provider_latency_average_ms,
                    is_rate_limited: p.is_rate_limited,
                }),
            }
        }

        /// `plugin.initialize` params.
        pub fn initialize_request(d: $crate::dto::InitializeDto) -> $($wit)::+::InitializeRequest {
            $($wit)::+::InitializeRequest {
                host_ipc_version: d.host_ipc_version,
                core_version: d.core_version,
            }
        }

        /// `tool.execute` params.
        pub fn tool_call(d: $crate::dto::ToolExecuteDto) -> $($wit)::+::ToolCall {
            $($wit)::+::ToolCall {
                tool_name: d.tool_name,
                arguments: d.arguments,
                session_id: d.session_id,
                tool_call_id: d.tool_call_id,
            }
        }

        /// `command.execute` params.
        pub fn command_call(d: $crate::dto::CommandExecuteDto) -> $($wit)::+::CommandCall {
            $($wit)::+::CommandCall {
                command_name: d.command_name,
                arguments: d.arguments,
                session_id: d.session_id,
            }
        }

        /// `hook.emit` params; `None` for an event this version does not know.
        pub fn hook_payload(d: $crate::dto::HookEmitDto) -> Option<$($wit)::+::HookPayload> {
            Some($($wit)::+::HookPayload {
                event: $($wit)::+::HookEvent::from_wire(&d.event)?,
                subject_id: d.subject_id,
                metadata: d.metadata.into_iter().collect(),
            })
        }

        /// The manifest as sent in the handshake.
        pub fn manifest(m: $($wit)::+::Manifest) -> $crate::dto::ManifestDto {
            $crate::dto::ManifestDto {
                id: m.id,
                name: m.name,
                version: m.version,
                description: m.description,
                author: m.author,
                capabilities: m
                    .capabilities
                    .iter()
                    .map(|c| c.wire_name().to_owned())
                    .collect(),
                minimum_core_version: m.minimum_core_version,
            }
        }

        /// A manifest DTO back as the WIT record; `None` if a capability
        /// name is unknown.
        pub fn manifest_from_dto(d: $crate::dto::ManifestDto) -> Option<$($wit)::+::Manifest> {
            Some($($wit)::+::Manifest {
                id: d.id,
                name: d.name,
                version: d.version,
                description: d.description,
                author: d.author,
                capabilities: d
                    .capabilities
                    .iter()
                    .map(|c| $($wit)::+::Capability::from_wire(c))
                    .collect::<Option<_>>()?,
                minimum_core_version: d.minimum_core_version,
            })
        }

        /// The `plugin.initialize` result.
        pub fn handshake(h: $($wit)::+::Handshake) -> $crate::dto::HandshakeDto {
            let mut supported_hooks: Vec<&'static str> =
                h.supported_hooks.iter().map(|e| e.wire_name()).collect();
            // The spec requires ascending order; do not trust the guest for it.
            supported_hooks.sort_unstable();
            supported_hooks.dedup();
            $crate::dto::HandshakeDto {
                manifest: manifest(h.manifest),
                ipc_version: h.ipc_version,
                sdk_version: h.sdk_version,
                tools: h
                    .tools
                    .into_iter()
                    .map(|t| $crate::dto::ToolDescriptorDto {
                        name: t.name,
                        description: t.description,
                        input_schema: t.input_schema,
                    })
                    .collect(),
                commands: h
                    .commands
                    .into_iter()
                    .map(|c| $crate::dto::CommandDescriptorDto {
                        name: c.name,
                        aliases: c.aliases,
                        description: c.description,
                        category: c.category,
                        argument_hint: c.argument_hint,
                    })
                    .collect(),
                supported_hooks,
            }
        }

        /// The `command.execute` result.
        pub fn command_result(r: $($wit)::+::CommandResult) -> $crate::dto::CommandResultDto {
            match r {
                $($wit)::+::CommandResult::Message(m) => $crate::dto::CommandResultDto {
                    is_prompt: false,
                    text: m.text,
                    presentation: Some(match m.presentation {
                        $($wit)::+::Presentation::Modal => "modal",
                        $($wit)::+::Presentation::Inline => "inline",
                    }),
                    title: m.title,
                },
                $($wit)::+::CommandResult::Prompt(text) => $crate::dto::CommandResultDto {
                    is_prompt: true,
                    text,
                    presentation: Some("inline"),
                    title: None,
                },
            }
        }
    };
}
