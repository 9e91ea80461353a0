//! Translating all Go templates of a chart into minijinja source, shared with a helper thread when the chart
//! has enough template text (Helm parses templates one after another).

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::gotmpl::{self, ParseError};
use crate::precompile::EarlyCompiler;

/// A template file with the chart path it belongs to.
pub(crate) struct TemplateFile<'a> {
    pub(crate) path: String,
    pub(crate) data: &'a [u8],
}

/// Template bytes below which a chart is translated on the calling thread alone, without counting its actions.
const PARALLEL_TRANSLATE_BYTES: usize = 16 * 1024;

/// Actions (estimated from `{` bytes) below which a chart is translated on the calling thread alone: translation
/// costs by action far more than by byte of text (a 44 KB CRD file of plain text translates in a fraction of the
/// time of 5 KB of actions), and handing work to the helper costs about as much as translating this many
/// actions (measured on the bench charts: cert-service, 169 actions in 60 KB, rendered cold 10 % faster alone;
/// gardenlet, 616 actions, and dns-service, 1 259, 8–10 % faster with the helper).
const PARALLEL_TRANSLATE_ACTIONS: usize = 400;

/// The least time the caller waits for files the helper has started before translating them itself.
const MIN_PATIENCE: Duration = Duration::from_micros(200);

/// Stack of the helper thread: the main thread's usual size, as the parser recurses into nested actions.
const HELPER_STACK_BYTES: usize = 8 * 1024 * 1024;

type Job = Box<dyn FnOnce() + Send>;

/// The process's one translation helper thread, started on first use (`None` when no thread could be started).
/// It runs one job at a time; jobs of concurrent renders queue, and every render also works through its own
/// list, so none waits for a job that has not started.
static HELPER: LazyLock<Option<Mutex<mpsc::Sender<Job>>>> = LazyLock::new(|| {
    let (sender, receiver) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("chart-translate".into())
        .stack_size(HELPER_STACK_BYTES)
        .spawn(move || {
            for job in receiver {
                job();
            }
        })
        .ok()
        .map(|_| Mutex::new(sender))
});

/// Hands `value` to the helper thread to be freed there (here when there is no helper): a renderer whose charts
/// were translated with the helper's help frees them off its caller's path. For a chart translated on one thread
/// waking the helper costs more than the freeing (measured on the bench charts).
pub(crate) fn drop_on_helper<T: Send + 'static>(value: T) {
    let Some(helper) = HELPER.as_ref() else {
        return;
    };
    let job: Job = Box::new(move || drop(value));
    let _ = helper.lock().unwrap_or_else(|p| p.into_inner()).send(job);
}

/// A template's Go source (as UTF-8; empty when the template has no action) and its translation, or why it does
/// not parse.
pub(crate) type Translation = Result<(Arc<str>, gotmpl::TranslatedFile), ParseError>;

type Outcome = std::thread::Result<Result<gotmpl::TranslatedFile, ParseError>>;

/// One chart's files, translated by whichever thread claims each first.
struct Work {
    /// (template path, Go source) in the order to claim them (largest first).
    files: Vec<(String, Arc<str>)>,
    /// The position in the chart's template list of each of `files`.
    order: Vec<usize>,
    next: AtomicUsize,
    /// Results of the files the helper claimed, by position in `files`.
    helped: Mutex<Vec<(usize, Outcome)>>,
    done: Condvar,
}

impl Work {
    fn claim(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.files.len()).then_some(i)
    }

    fn translate(&self, i: usize) -> Result<gotmpl::TranslatedFile, ParseError> {
        let (path, text) = &self.files[i];
        gotmpl::translate_chart_file(path, text, &crate::funcs::is_function, self.order[i])
    }
}

/// Whether translating `templates` is enough work to share with the helper.
fn worth_sharing(templates: &[TemplateFile<'_>]) -> bool {
    let total: usize = templates.iter().map(|f| f.data.len()).sum();
    if total < PARALLEL_TRANSLATE_BYTES || templates.len() < 2 {
        return false;
    }
    // Every action opens with `{{`; a vectorised byte count over the text is cheap next to translating it.
    let braces: usize = templates
        .iter()
        .map(|f| gotmpl::count_byte(f.data, b'{'))
        .sum();
    braces / 2 >= PARALLEL_TRANSLATE_ACTIONS
}

/// Each template's Go source and translation, in the order of `templates`. Files are independent, so a chart
/// with enough template text is shared with the helper thread: both claim files (largest first) until none
/// is left, and this thread then waits only for the files the helper started, and only for a while. Under a busy
/// CPU the helper may not run at all, or stop in the middle of a file, and this thread translates everything. The
/// caller applies the results in order, so the first error in parse order is the one reported, as in sequential
/// translation.
///
/// This thread claims the largest file before handing the chart to the helper, so the longest translation starts at
/// once. With `early`, the helper compiles the files it translated once none is left to claim (the bodies of the
/// files a render executes, in execution order, then their `define`s), while this thread is still translating.
///
/// The flag says whether the helper was handed a share of the work.
pub(crate) fn translate_all(
    templates: &[TemplateFile<'_>],
    early: Option<Arc<EarlyCompiler>>,
) -> (Vec<Translation>, bool) {
    // `from_utf8` checks ASCII a word at a time; the lossy conversion walks byte by byte even over valid text.
    let text = |file: &TemplateFile<'_>| -> Arc<str> {
        match std::str::from_utf8(file.data) {
            Ok(text) => text.into(),
            Err(_) => String::from_utf8_lossy(file.data).into(),
        }
    };
    let helper = HELPER.as_ref().filter(|_| worth_sharing(templates));
    let Some(helper) = helper else {
        let translations = templates
            .iter()
            .enumerate()
            .map(|(i, file)| {
                // Translated from the chart's own bytes; the text is copied out only for a file with actions, whose
                // error messages look their columns up in it (a CRD file is often all text, and tens of KB).
                let source = match std::str::from_utf8(file.data) {
                    Ok(source) => Cow::Borrowed(source),
                    Err(_) => String::from_utf8_lossy(file.data),
                };
                let translated = gotmpl::translate_chart_file(
                    &file.path,
                    &source,
                    &crate::funcs::is_function,
                    i,
                )?;
                let text: Arc<str> = if translated.has_actions() {
                    source.as_ref().into()
                } else {
                    "".into()
                };
                Ok((text, translated))
            })
            .collect();
        return (translations, false);
    };
    let mut order: Vec<usize> = (0..templates.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(templates[i].data.len()));
    let work = Arc::new(Work {
        files: order
            .iter()
            .map(|&i| (templates[i].path.clone(), text(&templates[i])))
            .collect(),
        order: order.clone(),
        next: AtomicUsize::new(0),
        helped: Mutex::new(Vec::new()),
        done: Condvar::new(),
    });
    let shared = Arc::clone(&work);
    // Claimed before the helper can start: translating the largest file is the longest part of the work.
    let first = work.claim();
    let job: Job = Box::new(move || {
        let mut to_compile = Vec::new();
        while let Some(i) = shared.claim() {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| shared.translate(i)));
            if let (Some(_), Ok(Ok(translated))) = (&early, &outcome) {
                to_compile.push((
                    shared.order[i],
                    compile_list(&shared.files[i].0, translated),
                ));
            }
            shared
                .helped
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((i, outcome));
            shared.done.notify_one();
        }
        if let Some(early) = early {
            // A panic while compiling leaves the rest to the render, which compiles each template it reaches.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                compile_early(&early, to_compile);
            }));
        }
    });
    let handed = helper
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send(job)
        .is_ok();
    let mut results: Vec<Option<Result<gotmpl::TranslatedFile, ParseError>>> =
        (0..templates.len()).map(|_| None).collect();
    let mut own = 0;
    let started = Instant::now();
    for i in first.into_iter().chain(std::iter::from_fn(|| work.claim())) {
        results[i] = Some(work.translate(i));
        own += 1;
    }
    if handed {
        let helped_count = work.files.len() - own;
        // A helper that has not finished its files after about as long again as this thread took for its own
        // share was most likely taken off the CPU in the middle of one: this thread then translates what is left
        // itself (the helper's late results are dropped with the work).
        let deadline = Instant::now() + started.elapsed().max(MIN_PATIENCE);
        let mut helped = work.helped.lock().unwrap_or_else(|p| p.into_inner());
        while helped.len() < helped_count {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            helped = work
                .done
                .wait_timeout(helped, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let finished: Vec<(usize, Outcome)> = helped.drain(..).collect();
        drop(helped);
        for (i, outcome) in finished {
            results[i] = Some(outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        for (i, result) in results.iter_mut().enumerate() {
            if result.is_none() {
                *result = Some(work.translate(i));
            }
        }
    }
    // `results` is in claim order; give each back to its template.
    let mut in_order: Vec<Option<Translation>> = (0..templates.len()).map(|_| None).collect();
    for ((claim, result), (_, text)) in results.into_iter().enumerate().zip(&work.files) {
        let result = result.map(|r| r.map(|translated| (Arc::clone(text), translated)));
        in_order[order[claim]] = result;
    }
    (in_order.into_iter().flatten().collect(), true)
}

/// A template to compile early: its name and minijinja source.
type Early = (String, String);

/// A file's templates to compile early: its body (none for a partial) and its `define`s.
type FileTemplates = (Option<Early>, Vec<Early>);

/// What of a translated file is worth compiling early: the file's body unless it is a partial (`_`-prefixed,
/// never executed), and its `define`s.
fn compile_list(path: &str, translated: &gotmpl::TranslatedFile) -> FileTemplates {
    let partial = path
        .rsplit('/')
        .next()
        .is_some_and(|base| base.starts_with('_'));
    let body = (!partial).then(|| (path.to_string(), translated.body.source.clone()));
    let defines = translated
        .defines
        .iter()
        .map(|(name, define)| (name.clone(), define.source.clone()))
        .collect();
    (body, defines)
}

/// Compiles the listed templates (by position in parse order), every file's body before any `define`.
fn compile_early(early: &EarlyCompiler, mut files: Vec<(usize, FileTemplates)>) {
    files.sort_by_key(|(i, _)| *i);
    let bodies = files.iter().filter_map(|(_, (body, _))| body.as_ref());
    let defines = files.iter().flat_map(|(_, (_, defines))| defines);
    early.compile_all(bodies.chain(defines));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_charts_with_many_actions_are_shared() {
        let leak =
            |text: String| -> &'static [u8] { Box::leak(text.into_bytes().into_boxed_slice()) };
        let text = leak("plain text\n".repeat(4000));
        let many = leak("{{ .Values.a }}\n".repeat(1100));
        let few = leak("{{ .Values.a }}\n".repeat(150));
        let cases: [(&[&'static [u8]], bool); 5] = [
            (&[b"{{ .A }}", b"{{ .B }}"], false),
            (&[text, text], false),
            (&[text, few], false),
            (&[many, few], true),
            (&[many], false),
        ];
        for (i, (data, want)) in cases.into_iter().enumerate() {
            let files: Vec<_> = data.iter().map(|d| file("c/templates/x.yaml", d)).collect();
            assert_eq!(worth_sharing(&files), want, "case {i}");
        }
    }

    #[test]
    fn a_helper_stuck_in_another_job_delays_nothing() {
        // The helper runs one job at a time: while it is held in another one, a chart handed to it is translated
        // by the calling thread alone, and the held job's release afterwards changes nothing.
        let big: &'static [u8] = Box::leak(
            "{{ .Values.a }}\n"
                .repeat(PARALLEL_TRANSLATE_BYTES / 4)
                .into_bytes()
                .into_boxed_slice(),
        );
        let (release, held) = mpsc::channel::<()>();
        if let Some(helper) = HELPER.as_ref() {
            let job: Job = Box::new(move || {
                let _ = held.recv_timeout(Duration::from_secs(30));
            });
            helper
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send(job)
                .unwrap();
        }
        let files = vec![
            file("c/templates/a.yaml", big),
            file("c/templates/b.yaml", big),
        ];
        let (results, _) = translate_all(&files, None);
        let _ = release.send(());
        assert_eq!(results.len(), 2);
        for result in &results {
            assert_eq!(
                &*result.as_ref().unwrap().0,
                std::str::from_utf8(big).unwrap()
            );
        }
    }

    #[test]
    fn values_handed_to_the_helper_are_dropped() {
        struct Signal(mpsc::Sender<std::thread::ThreadId>);
        impl Drop for Signal {
            fn drop(&mut self) {
                let _ = self.0.send(std::thread::current().id());
            }
        }
        let (sender, dropped) = mpsc::channel();
        drop_on_helper(Signal(sender));
        let on = dropped
            .recv_timeout(Duration::from_secs(30))
            .expect("dropped");
        if HELPER.is_some() {
            assert_ne!(on, std::thread::current().id());
        }
    }

    #[test]
    fn only_the_text_of_a_file_with_actions_is_kept() {
        // Alone on this thread: the source kept is the file's text where it has actions (the helper path keeps every
        // file's), and the translation is the one made from the text itself.
        let files = vec![
            file("c/templates/crd.yaml", b"kind: CRD\nspec: {}\n"),
            file("c/templates/a.yaml", b"a: {{ .Values.a }}\n"),
            file("c/templates/_d.tpl", b"{{ define \"d\" }}{{ .x }}{{ end }}"),
        ];
        let (results, helped) = translate_all(&files, None);
        assert!(!helped);
        for (file, result) in files.iter().zip(&results) {
            let (text, translated) = result.as_ref().unwrap();
            let source = std::str::from_utf8(file.data).unwrap();
            let want =
                gotmpl::translate_chart_file(&file.path, source, &crate::funcs::is_function, 0)
                    .unwrap();
            assert_eq!(
                translated.has_actions(),
                !want.body.actions.is_empty() || !want.defines.is_empty()
            );
            assert_eq!(&**text, if translated.has_actions() { source } else { "" });
        }
        assert!(!results[0].as_ref().unwrap().1.has_actions());
        assert!(results[1].as_ref().unwrap().1.has_actions());
        assert!(results[2].as_ref().unwrap().1.has_actions());
    }

    fn file(path: &str, data: &'static [u8]) -> TemplateFile<'static> {
        TemplateFile {
            path: path.into(),
            data,
        }
    }

    #[test]
    fn results_keep_the_order_of_the_templates_on_both_paths() {
        let big: &'static [u8] = Box::leak(
            "{{ .Values.a }}\n"
                .repeat(PARALLEL_TRANSLATE_BYTES / 8)
                .into_bytes()
                .into_boxed_slice(),
        );
        for first in [&b"{{ .A }}"[..], big] {
            let files = vec![
                file("c/templates/a.yaml", first),
                file("c/templates/b.yaml", b"{{ if }}"),
                file(
                    "c/templates/c.yaml",
                    b"{{ define \"x\" }}{{ .X }}{{ end }}plain",
                ),
                file("c/templates/d.yaml", big),
            ];
            let (results, _) = translate_all(&files, None);
            assert_eq!(results.len(), 4);
            let error = results[1].as_ref().unwrap_err();
            assert_eq!(error.template, "c/templates/b.yaml");
            let (text, translated) = results[2].as_ref().unwrap();
            assert!(text.ends_with("plain"));
            assert_eq!(translated.defines.len(), 1);
            assert_eq!(translated.defines[0].0, "x");
            assert_eq!(
                &*results[3].as_ref().unwrap().0,
                std::str::from_utf8(big).unwrap()
            );
            assert!(results[0].is_ok());
        }
    }
}
