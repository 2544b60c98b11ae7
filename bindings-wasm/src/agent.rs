//! The agent side of the module (feature `agent`): the core's tools (`tools`, `callTool`,
//! `resetTurn`, `setToolLimits`) and the query log to a callback (`setQueryLog`), as in the
//! Node binding. Left out of the search module.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wikidex::{LogEntry, QueryLog, ToolLimits};

use crate::error::OrThrow;
use crate::{invalid, is_absent, opt_string, options, record, string, stringify, JsIndex};

#[wasm_bindgen(js_class = Index)]
impl JsIndex {
    /// The agent tools' definitions: name, description, JSON Schema of the arguments.
    #[wasm_bindgen(unchecked_return_type = "ToolDef[]")]
    pub fn tools(&self) -> Result<JsValue, JsValue> {
        record(&self.session.tool_definitions()).or_throw()
    }

    /// Runs one agent tool: `{text, data}` (text for the model, data for programs).
    #[wasm_bindgen(js_name = callTool, unchecked_return_type = "ToolResult")]
    pub fn call_tool(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, unknown>")] args: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let name = string("name", &name)?;
            let args = match args {
                Some(a) if !is_absent(&a) => stringify("the tool's arguments", &a)?,
                _ => "{}".to_string(),
            };
            record(&self.session.call_tool(&name, &args)?)
        })()
        .or_throw()
    }

    /// Starts a new agent turn (the drill-down count goes back to 0).
    #[wasm_bindgen(js_name = resetTurn)]
    pub fn reset_turn(&self) {
        self.session.reset_turn();
    }

    /// Sets the agent tools' limits (the core's `ToolLimits`); the turn count starts at 0.
    #[wasm_bindgen(js_name = setToolLimits)]
    pub fn set_tool_limits(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ToolLimits")] limits: JsValue,
    ) -> Result<(), JsValue> {
        options::<ToolLimits>("tool limits", &limits)
            .and_then(|limits| self.session.set_tool_limits(limits))
            .or_throw()
    }

    /// Logs every search and citation check, as `origin` (default `browser`), to `callback`,
    /// called with each entry from a microtask after the search has returned (a slow callback
    /// never slows a search); `null` stops logging.
    #[wasm_bindgen(js_name = setQueryLog)]
    pub fn set_query_log(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((entry: LogEntry) => void) | null")]
        callback: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string")] origin: Option<JsValue>,
    ) -> Result<(), JsValue> {
        (|| {
            let origin = opt_string("origin", &origin.unwrap_or(JsValue::UNDEFINED))?
                .unwrap_or_else(|| "browser".into());
            let log: Option<Arc<dyn QueryLog>> = if is_absent(&callback) {
                None
            } else {
                let f = callback
                    .dyn_into::<Function>()
                    .map_err(|_| invalid("the query log must be a function or null".into()))?;
                Some(Arc::new(CallbackLog::register(f)))
            };
            self.session.set_query_log(log, &origin);
            Ok(())
        })()
        .or_throw()
    }
}

thread_local! {
    /// The callbacks of the live logs, by id: a JavaScript function is not `Send`, and the
    /// core's `QueryLog` must be, so the log holds only its id. The module has one thread.
    static CALLBACKS: RefCell<HashMap<u32, Function>> = RefCell::new(HashMap::new());
}

/// A query log that hands each entry to a JavaScript callback in a microtask.
struct CallbackLog(u32);

impl CallbackLog {
    fn register(f: Function) -> CallbackLog {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        CALLBACKS.with(|c| c.borrow_mut().insert(id, f));
        CallbackLog(id)
    }
}

impl Drop for CallbackLog {
    fn drop(&mut self) {
        // `try_with`: at thread exit the table may be gone already.
        let _ = CALLBACKS.try_with(|c| c.borrow_mut().remove(&self.0));
    }
}

impl QueryLog for CallbackLog {
    fn record(&self, entry: &LogEntry) {
        let Some(f) = CALLBACKS.with(|c| c.borrow().get(&self.0).cloned()) else {
            return;
        };
        let Ok(entry) = record(entry) else { return };
        let global = js_sys::global();
        // `queueMicrotask` exists in pages, workers and Node; a log never throws into a search.
        if let Ok(queue) = Reflect::get(&global, &"queueMicrotask".into()) {
            if let Ok(queue) = queue.dyn_into::<Function>() {
                let _ = queue.call1(&global, &f.bind1(&JsValue::NULL, &entry));
            }
        }
    }
}
