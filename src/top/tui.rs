//! The full-screen view of `inspect top` (ratatui on crossterm): the JVM table with the keys a
//! `top`/`htop` user expects, a detail view of one JVM (jstat's `-gcutil`, `-gccapacity` and
//! `-gccause` of its last sample, sparklines of its history), the thread dump of the selected JVM
//! (`t`: `inspect threads`, which holds the JVM for the few milliseconds of the walk, taken only
//! on that key), and a help screen.
//!
//! Terminal hygiene: the terminal is restored (raw mode off, main screen back, cursor shown) on
//! `q`/Ctrl-C, on SIGTERM, SIGINT and SIGHUP (a handler sets a flag the event loop polls at
//! least every 100 ms), on an error, and on a panic (ratatui's hook). `NO_COLOR` (set and not
//! empty) leaves out every colour: only bold, reverse and dim remain. On a narrow terminal the
//! columns are kept in [`table::PRIORITY`] order.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use hsinspect::stat::View;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Clear, Paragraph, Row, Sparkline, Table, TableState};
use ratatui::{DefaultTerminal, Frame};

use super::TopArgs;
use super::model::{Host, State, Tracked};
use super::os::{self, Input};
use super::table::{self, ALL, Column, PRIORITY, Sort};
use hsinspect::Pid;

/// What the screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Screen {
    Table,
    Detail(i32),
    /// The thread dump of a JVM ([`Ui::dump`]).
    Threads(i32),
    Help,
}

struct Ui {
    sort: Sort,
    filter: String,
    /// The filter being typed after `/`.
    editing: Option<String>,
    paused: bool,
    screen: Screen,
    /// The screen `?` was pressed on.
    before_help: Screen,
    /// The selected JVM, by pid (so it stays selected when rows move).
    selected: Option<i32>,
    state: TableState,
    color: bool,
    delay: Duration,
    /// The last thread dump (`t`): its lines, the first line shown, the screen to go back to.
    dump: Vec<String>,
    scroll: usize,
    before_dump: Screen,
}

/// A thread dump of `pid` as `inspect threads` prints it, in lines; the error's words when it
/// cannot be taken.
fn take_dump(pid: Pid) -> Vec<String> {
    let text = os::thread_dump_text(pid);
    text.lines().map(str::to_string).collect()
}

/// Runs the full-screen view until quit.
pub fn run(mut host: Host, args: &TopArgs, sort: Sort) -> anyhow::Result<ExitCode> {
    os::catch_stop_signals()?;
    let mut ui = Ui {
        sort,
        filter: String::new(),
        editing: None,
        paused: false,
        screen: Screen::Table,
        before_help: Screen::Table,
        selected: None,
        state: TableState::default(),
        color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        delay: args.delay,
        dump: Vec::new(),
        scroll: 0,
        before_dump: Screen::Table,
    };
    // The first refresh before the screen changes: a failure leaves the terminal as it was.
    host.refresh()?;
    let mut terminal = ratatui::try_init()?;
    let result = event_loop(&mut terminal, &mut host, &mut ui, args.iterations);
    restore();
    result.map(|()| ExitCode::SUCCESS)
}

/// Raw mode off, the main screen back, the cursor shown.
fn restore() {
    ratatui::restore();
    let _ = ratatui::crossterm::execute!(std::io::stdout(), ratatui::crossterm::cursor::Show);
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    host: &mut Host,
    ui: &mut Ui,
    iterations: Option<u64>,
) -> anyhow::Result<()> {
    let mut refreshes: u64 = 1;
    let mut next = Instant::now() + ui.delay;
    loop {
        terminal.draw(|f| draw(f, host, ui))?;
        loop {
            if os::stop_requested() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            let wait = (next - now).min(Duration::from_millis(100));
            // Our own poll first: crossterm is asked only when the terminal is still there
            // (its buffered events, then the bytes that arrived).
            if let Input::Gone = os::wait_for_input(Duration::ZERO) {
                return Ok(());
            }
            if !event::poll(Duration::ZERO)? {
                if let Input::Gone = os::wait_for_input(wait) {
                    return Ok(());
                }
                continue;
            }
            {
                match event::read()? {
                    Event::Key(key) if key.kind != KeyEventKind::Release => {
                        if !on_key(ui, host, key) {
                            return Ok(());
                        }
                        break; // redraw
                    }
                    Event::Resize(..) => break,
                    _ => {}
                }
            }
        }
        if Instant::now() >= next {
            if !ui.paused {
                if iterations.is_some_and(|n| refreshes >= n) {
                    return Ok(());
                }
                host.refresh()?;
                refreshes += 1;
            }
            next = Instant::now() + ui.delay;
        }
    }
}

/// Handles a key; `false` to quit.
fn on_key(ui: &mut Ui, host: &Host, key: KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(key.code, KeyCode::Char('c')) {
        return false;
    }
    if let Some(text) = &mut ui.editing {
        match key.code {
            KeyCode::Enter => {
                ui.filter = ui.editing.take().unwrap_or_default();
                ui.state.select(Some(0));
            }
            KeyCode::Esc => ui.editing = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) if !ctrl => text.push(c),
            _ => {}
        }
        return true;
    }
    if ui.screen == Screen::Help {
        ui.screen = ui.before_help;
        return !matches!(key.code, KeyCode::Char('q'));
    }
    let set_sort = |ui: &mut Ui, column: Column| {
        if ui.sort.column == column {
            ui.sort.reverse = !ui.sort.reverse;
        } else {
            ui.sort = Sort {
                column,
                reverse: false,
            };
        }
    };
    if let Screen::Threads(pid) = ui.screen {
        let page = 20;
        match key.code {
            KeyCode::Esc => ui.screen = ui.before_dump,
            KeyCode::Char('t') => {
                ui.dump = take_dump(pid);
                ui.scroll = 0;
            }
            KeyCode::Up | KeyCode::Char('k') => ui.scroll = ui.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => ui.scroll += 1,
            KeyCode::PageUp => ui.scroll = ui.scroll.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => ui.scroll += page,
            KeyCode::Home => ui.scroll = 0,
            KeyCode::End => ui.scroll = ui.dump.len(),
            KeyCode::Char('q') => return false,
            KeyCode::Char('?') | KeyCode::Char('h') | KeyCode::F(1) => {
                ui.before_help = ui.screen;
                ui.screen = Screen::Help;
            }
            _ => {}
        }
        ui.scroll = ui.scroll.min(ui.dump.len().saturating_sub(1));
        return true;
    }
    match key.code {
        KeyCode::Char('q') => return false,
        KeyCode::Char('t') => {
            let pid = match ui.screen {
                Screen::Detail(pid) => Some(pid),
                _ => ui.selected,
            };
            if let Some(pid) = pid {
                ui.before_dump = ui.screen;
                ui.dump = take_dump(pid);
                ui.scroll = 0;
                ui.screen = Screen::Threads(pid);
            }
        }
        KeyCode::Char('?') | KeyCode::Char('h') | KeyCode::F(1) => {
            ui.before_help = ui.screen;
            ui.screen = Screen::Help;
        }
        KeyCode::Esc if matches!(ui.screen, Screen::Detail(_)) => ui.screen = Screen::Table,
        KeyCode::Esc => ui.filter.clear(),
        KeyCode::Char('p') | KeyCode::Char(' ') => ui.paused = !ui.paused,
        KeyCode::Char('/') => ui.editing = Some(ui.filter.clone()),
        KeyCode::Char('P') => set_sort(ui, Column::Cpu),
        KeyCode::Char('M') => set_sort(ui, Column::Rss),
        KeyCode::Char('G') => set_sort(ui, Column::Gc),
        KeyCode::Char('A') => set_sort(ui, Column::Alloc),
        KeyCode::Char('H') => set_sort(ui, Column::HeapPct),
        KeyCode::Char('N') => set_sort(ui, Column::Pid),
        KeyCode::Char('T') => set_sort(ui, Column::Threads),
        KeyCode::Char('R') => ui.sort.reverse = !ui.sort.reverse,
        KeyCode::Char('<') | KeyCode::Char(',') | KeyCode::Char('>') | KeyCode::Char('.') => {
            let i = ALL.iter().position(|c| *c == ui.sort.column).unwrap_or(0);
            let left = matches!(key.code, KeyCode::Char('<') | KeyCode::Char(','));
            let j = if left {
                (i + ALL.len() - 1) % ALL.len()
            } else {
                (i + 1) % ALL.len()
            };
            ui.sort.column = ALL[j];
        }
        KeyCode::Enter if ui.screen == Screen::Table => {
            if let Some(pid) = ui.selected {
                ui.screen = Screen::Detail(pid);
            }
        }
        KeyCode::Up | KeyCode::Char('k') => move_selection(ui, host, -1),
        KeyCode::Down | KeyCode::Char('j') => move_selection(ui, host, 1),
        KeyCode::PageUp => move_selection(ui, host, -10),
        KeyCode::PageDown => move_selection(ui, host, 10),
        KeyCode::Home => move_selection(ui, host, -1_000_000),
        KeyCode::End => move_selection(ui, host, 1_000_000),
        _ => {}
    }
    true
}

fn move_selection(ui: &mut Ui, host: &Host, by: i64) {
    let rows = table::rows(host, ui.sort, &ui.filter);
    if rows.is_empty() {
        return;
    }
    let at = ui
        .selected
        .and_then(|pid| rows.iter().position(|j| j.info.pid == pid))
        .unwrap_or(0) as i64;
    let to = (at + by).clamp(0, rows.len() as i64 - 1) as usize;
    ui.selected = Some(rows[to].info.pid);
}

fn styles(ui: &Ui) -> (Style, Style, Style, Style, Style) {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    if ui.color {
        (
            bold,
            Style::default().fg(Color::Black).bg(Color::Cyan),
            Style::default().fg(Color::Black).bg(Color::Yellow),
            Style::default().fg(Color::Red),
            Style::default().fg(Color::DarkGray),
        )
    } else {
        (
            bold,
            Style::default().add_modifier(Modifier::REVERSED),
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            Style::default().add_modifier(Modifier::DIM),
            Style::default().add_modifier(Modifier::DIM),
        )
    }
}

fn draw(f: &mut Frame, host: &Host, ui: &mut Ui) {
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let (bold, ..) = styles(ui);
    let mut status = vec![Span::raw(format!(
        "sort {} {}",
        ui.sort.column.header(),
        if ui.sort.reverse { "(reversed)" } else { "" }
    ))];
    if !ui.filter.is_empty() {
        status.push(Span::raw(format!("  filter: {}", ui.filter)));
    }
    if ui.paused {
        status.push(Span::styled("  PAUSED", bold));
    }
    f.render_widget(
        Paragraph::new(vec![
            Line::from(Span::styled(super::title(host), bold)),
            Line::from(status),
        ]),
        top,
    );
    match ui.screen {
        Screen::Table | Screen::Help => draw_table(f, body, host, ui),
        Screen::Detail(pid) => draw_detail(f, body, host, ui, pid),
        Screen::Threads(_) => {
            let shown: Vec<Line> = ui
                .dump
                .iter()
                .skip(ui.scroll)
                .take(body.height as usize)
                .map(|l| Line::from(l.as_str()))
                .collect();
            f.render_widget(Paragraph::new(shown), body);
        }
    }
    let footer = match (&ui.editing, ui.screen) {
        (Some(text), _) => {
            format!("filter (main, user or pid; Enter applies, Esc cancels): {text}_")
        }
        (None, Screen::Detail(_)) => "Esc back  t thread dump  p pause  ? help  q quit".into(),
        (None, Screen::Threads(pid)) => format!(
            "thread dump of {pid}, line {} of {}  Up Down PgUp PgDn Home End scroll  t take again  Esc back  q quit",
            ui.scroll + 1,
            ui.dump.len()
        ),
        _ => {
            "q quit  ? help  / filter  Enter details  t threads  P M G A sort  < > column  R reverse  p pause"
                .into()
        }
    };
    f.render_widget(Paragraph::new(footer), bottom);
    if ui.screen == Screen::Help {
        draw_help(f, body);
    }
}

/// The columns that fit in `width`, taken in [`PRIORITY`] order and shown in [`ALL`] order;
/// MAIN gets what is left.
fn fitting(width: usize) -> Vec<Column> {
    let mut used = 0;
    let mut chosen = Vec::new();
    for c in PRIORITY {
        let w = c.width() + usize::from(!chosen.is_empty());
        if used + w <= width {
            used += w;
            chosen.push(c);
        }
    }
    ALL.into_iter().filter(|c| chosen.contains(c)).collect()
}

fn draw_table(f: &mut Frame, area: Rect, host: &Host, ui: &mut Ui) {
    let (_, header_style, selected_style, gone_style, unreadable_style) = styles(ui);
    let rows = table::rows(host, ui.sort, &ui.filter);
    let columns = fitting(area.width as usize);
    let now = host.now();
    // Keep the selection on its JVM; when it left, on the row it was on.
    let at = ui
        .selected
        .and_then(|pid| rows.iter().position(|j| j.info.pid == pid))
        .or_else(|| {
            ui.state
                .selected()
                .map(|i| i.min(rows.len().saturating_sub(1)))
        });
    let at = at
        .filter(|_| !rows.is_empty())
        .or((!rows.is_empty()).then_some(0));
    ui.selected = at.map(|i| rows[i].info.pid);
    ui.state.select(at);
    let header = Row::new(columns.iter().map(|c| {
        let mut h = c.header().to_string();
        if *c == ui.sort.column {
            h.push(if ui.sort.reverse { '^' } else { 'v' });
        }
        Cell::from(if c.is_text() {
            Line::from(h)
        } else {
            Line::from(h).right_aligned()
        })
    }))
    .style(header_style);
    let body: Vec<Row> = rows
        .iter()
        .map(|j: &&Tracked| {
            let cells = columns.iter().map(|c| {
                let mut text = table::cell(*c, j, now);
                if *c == Column::Main
                    && let Some(note) = table::note(j)
                {
                    text = format!("{text} {note}");
                }
                Cell::from(if c.is_text() {
                    Line::from(text)
                } else {
                    Line::from(text).right_aligned()
                })
            });
            let row = Row::new(cells);
            match j.state {
                State::Live => row,
                State::Gone(_) => row.style(gone_style),
                State::Unreadable(_) => row.style(unreadable_style),
            }
        })
        .collect();
    let widths = columns.iter().map(|c| {
        if *c == Column::Main {
            Constraint::Min(c.width() as u16)
        } else {
            Constraint::Length(c.width() as u16)
        }
    });
    let t = Table::new(body, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(selected_style);
    f.render_stateful_widget(t, area, &mut ui.state);
}

/// `header` and `row` (of equal length, columns aligned) cut into pieces of at most `width`
/// characters, each cut where both have a space (between two columns).
fn wrap_aligned(header: &str, row: &str, width: usize) -> Vec<(String, String)> {
    let (h, r): (Vec<char>, Vec<char>) = (header.chars().collect(), row.chars().collect());
    if h.len() != r.len() || width < 8 {
        return vec![(header.to_string(), row.to_string())];
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    while h.len() - start > width {
        let cut = (start + 1..=start + width)
            .rev()
            .find(|&i| h[i] == ' ' && r[i] == ' ' && h[i - 1] != ' ' && r[i - 1] != ' ')
            .or_else(|| {
                (start + 1..=start + width)
                    .rev()
                    .find(|&i| h[i] == ' ' && r[i] == ' ')
            })
            .unwrap_or(start + width);
        pieces.push((
            h[start..cut].iter().collect(),
            r[start..cut].iter().collect(),
        ));
        start = cut;
    }
    pieces.push((h[start..].iter().collect(), r[start..].iter().collect()));
    pieces
}

/// jstat's header and row of `option` for `reading`'s snapshot, exactly as `inspect stat`
/// prints them (cut between columns to fit `width`).
fn jstat_lines(option: &str, jvm: &Tracked, width: usize) -> Vec<Line<'static>> {
    let Some(reading) = &jvm.reading else {
        return vec![Line::from(format!("-{option}: no sample"))];
    };
    let Ok(mut view) = View::new(option, false) else {
        return Vec::new();
    };
    let cells = view.cells(&reading.snapshot, None);
    let mut lines = vec![
        Line::from(format!("jstat -{option}")).style(Style::default().add_modifier(Modifier::BOLD)),
    ];
    for (header, row) in wrap_aligned(&view.header(), &view.row(&cells), width) {
        lines.push(Line::from(header));
        lines.push(Line::from(row));
    }
    lines
}

fn draw_detail(f: &mut Frame, area: Rect, host: &Host, ui: &Ui, pid: Pid) {
    let Some(jvm) = host.jvms.get(&pid) else {
        f.render_widget(
            Paragraph::new(format!("JVM {pid} is gone. Esc: back to the list.")),
            area,
        );
        return;
    };
    let now = host.now();
    let mut text = vec![Line::from(format!(
        "PID {}  {}  user {}  {}  up {}{}",
        pid,
        table::cell(Column::Main, jvm, now),
        table::cell(Column::User, jvm, now),
        table::cell(Column::Version, jvm, now),
        table::cell(Column::Uptime, jvm, now),
        table::note(jvm)
            .map(|n| format!("  {n}"))
            .unwrap_or_default(),
    ))];
    for option in ["gcutil", "gccapacity", "gccause"] {
        text.extend(jstat_lines(option, jvm, area.width as usize));
    }
    let cause = jvm.reading.as_ref().and_then(|r| {
        match r.snapshot.get("sun.gc.lastCause").map(|c| &c.value) {
            Some(hsinspect::perfdata::Value::String(s)) => Some(s.clone()),
            _ => None,
        }
    });
    text.push(Line::from(format!(
        "last GC cause: {}",
        cause.unwrap_or_else(|| "-".into())
    )));
    let height = text.len() as u16;
    let [head, charts] =
        Layout::vertical([Constraint::Length(height + 1), Constraint::Min(0)]).areas(area);
    f.render_widget(Paragraph::new(text), head);

    let h = &jvm.history;
    let fig = &jvm.figures;
    let series: [(String, Vec<u64>); 6] = [
        (
            format!("heap {}", table::cell(Column::Heap, jvm, now)),
            h.iter().map(|p| p.heap_used).collect(),
        ),
        (
            format!("eden {}", table::size(h.back().map_or(0, |p| p.eden_used))),
            h.iter().map(|p| p.eden_used).collect(),
        ),
        (
            format!("old {}", table::size(h.back().map_or(0, |p| p.old_used))),
            h.iter().map(|p| p.old_used).collect(),
        ),
        (
            format!("GC% {}", table::cell(Column::Gc, jvm, now)),
            h.iter().map(|p| (p.gc_percent * 10.0) as u64).collect(),
        ),
        (
            format!("alloc {} MB/s", table::cell(Column::Alloc, jvm, now)),
            h.iter()
                .map(|p| (p.alloc_mib_per_s * 10.0) as u64)
                .collect(),
        ),
        (
            format!(
                "threads {}",
                fig.threads.map_or("-".into(), |t| t.to_string())
            ),
            h.iter().map(|p| p.threads).collect(),
        ),
    ];
    let rows = Layout::vertical([Constraint::Length(1); 6]).split(charts);
    let color = if ui.color {
        Style::default().fg(Color::Green)
    } else {
        Style::default()
    };
    for ((label, data), row) in series.iter().zip(rows.iter()) {
        let [l, r] = Layout::horizontal([Constraint::Length(24), Constraint::Min(1)]).areas(*row);
        f.render_widget(Paragraph::new(label.as_str()), l);
        let keep = r.width as usize;
        let tail = &data[data.len().saturating_sub(keep)..];
        f.render_widget(Sparkline::default().data(tail).style(color), r);
    }
}

const HELP: &str = "\
inspect top: every HotSpot JVM on this host, read without stopping it

  P  sort by CPU%          M  sort by RSS          G  sort by GC%
  A  sort by ALLOC MB/s    H  sort by HEAP%        T  sort by THREADS
  N  sort by PID           <  >  previous / next column
  R  reverse the order     (the same sort key twice also reverses)
  /  filter by main class, user or pid (Enter applies, Esc clears)
  p  pause (space too)     Up Down PgUp PgDn Home End  select a JVM
  Enter  details of the selected JVM (jstat -gcutil, -gccapacity, -gccause)
  t  thread dump of the selected JVM (inspect threads: holds it a few ms)
  Esc    back             q  Ctrl-C  quit
  ?  this help (any key closes it)

GC% is GC time per second (jstat's GCT), ALLOC the bytes allocated per second
(eden and collections), SAFEPT% time at safepoints, JIT ms/s compilation time,
BLOCKED threads blocked on a monitor, WAITING threads waiting or sleeping.
- means the JVM has no such counter (as jstat prints).";

fn draw_help(f: &mut Frame, area: Rect) {
    let lines = HELP.lines().count() as u16 + 2;
    let width = HELP.lines().map(str::len).max().unwrap_or(0) as u16 + 4;
    let popup = Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(lines) / 2,
        width: width.min(area.width),
        height: lines.min(area.height),
    };
    f.render_widget(Clear, popup);
    f.render_widget(
        Paragraph::new(HELP).block(ratatui::widgets::Block::bordered().title(" keys ")),
        popup,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jstat_lines_are_cut_between_columns() {
        let header = "  S0     S1     E      O   ";
        let row = "  0.00   0.00  50.85  38.09";
        let pieces = wrap_aligned(header, row, 14);
        assert_eq!(
            pieces,
            vec![
                ("  S0     S1   ".to_string(), "  0.00   0.00 ".to_string()),
                ("  E      O   ".to_string(), " 50.85  38.09".to_string()),
            ]
        );
        assert_eq!(
            wrap_aligned("A B", "1 2", 80),
            vec![("A B".into(), "1 2".into())]
        );
    }

    #[test]
    fn small_terminals_keep_the_most_useful_columns() {
        let at80 = fitting(80);
        for c in [
            Column::Pid,
            Column::Main,
            Column::Cpu,
            Column::Gc,
            Column::Alloc,
        ] {
            assert!(at80.contains(&c), "{c:?} in {at80:?}");
        }
        let used: usize = at80.iter().map(|c| c.width() + 1).sum();
        assert!(used <= 81, "{at80:?}");
        assert_eq!(fitting(1000).len(), ALL.len());
    }
}
