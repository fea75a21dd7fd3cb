// The ask page: sends the question with its options to POST /api/v1/rag/query (streamed, or async
// with a job to poll), shows live status, and renders the answer: citation markers linked to their
// passages, flags, confidence, clickable follow-ups and per-stage timing. A streamed answer shows
// the model's draft text as it is written, then the verified answer in its place; if streaming
// fails before the answer is complete, the question is asked again without it.
"use strict";

(() => {
  const form = document.getElementById("ask-form");
  const statusLine = document.getElementById("status");
  const answerBox = document.getElementById("answer");
  const button = document.getElementById("ask-button");
  const { el } = Lexrag;

  const FLAG_LABELS = {
    hallucination_warning: ["Hallucination warning", "warn"],
    hallucination_detected: ["Unsupported claims removed", "warn"],
    needs_verification: ["Needs verification", "warn"],
    redactions_applied: ["Redactions applied", "info"],
    cache_hit: ["Cache hit", "info"],
    prompt_injection_detected: ["Injection attempt flagged", "warn"],
    indirect_injection_detected: ["Instructions in a document ignored", "warn"],
    answer_sanitized: ["Images or outside links removed", "warn"],
  };

  function requestBody() {
    const data = new FormData(form);
    const body = { query: data.get("query").trim() };
    for (const name of ["response_style", "template_id", "citation_style", "strictness"]) {
      if (data.get(name)) body[name] = data.get(name);
    }
    if (data.get("top_k")) body.top_k = Number(data.get("top_k"));
    const filters = {};
    if (data.get("case")) filters.case_ids = [Number(data.get("case"))];
    if (data.get("date_range_start")) filters.date_range_start = data.get("date_range_start");
    if (data.get("date_range_end")) filters.date_range_end = data.get("date_range_end");
    const jurisdictions = (data.get("jurisdictions") || "").split(",").map((s) => s.trim()).filter(Boolean);
    if (jurisdictions.length) filters.jurisdictions = jurisdictions;
    const docTypes = data.getAll("doc_types");
    if (docTypes.length) filters.doc_types = docTypes;
    if (Object.keys(filters).length) body.filters = filters;
    if (data.get("background")) body.mode = "async";
    if (data.get("agentic")) body.mode = "agentic"; // answered in the page, with the agent's steps
    if (data.get("show_cot_steps")) body.show_cot_steps = true;
    if (data.get("no_cot")) body.cot_enabled = false;
    if (data.get("max_reasoning_depth")) body.max_reasoning_depth = Number(data.get("max_reasoning_depth"));
    return body;
  }

  // The case the next question is asked in, in view above Options (where it is chosen).
  const caseSelect = form.elements.case;
  function showCase() {
    const option = caseSelect.selectedOptions[0];
    document.getElementById("asking-in-case").textContent = option && option.value ? option.textContent : "All cases";
  }
  caseSelect.addEventListener("change", showCase);
  document.getElementById("change-case").addEventListener("click", () => {
    form.querySelector("details.options").open = true;
    caseSelect.focus();
  });
  showCase();

  function fillForm(saved) {
    form.elements.query.value = saved.query || "";
    const options = saved.options || {};
    for (const name of ["response_style", "template_id", "citation_style", "strictness", "top_k", "max_reasoning_depth"]) {
      if (options[name] !== undefined && form.elements[name]) form.elements[name].value = options[name];
    }
    const filters = options.filters || {};
    if (filters.case_ids && filters.case_ids.length) form.elements.case.value = filters.case_ids[0];
    if (filters.date_range_start) form.elements.date_range_start.value = filters.date_range_start;
    if (filters.date_range_end) form.elements.date_range_end.value = filters.date_range_end;
    if (filters.jurisdictions) form.elements.jurisdictions.value = filters.jurisdictions.join(", ");
    for (const box of form.querySelectorAll('input[name="doc_types"]')) {
      box.checked = (filters.doc_types || []).includes(box.value);
    }
    showCase();
  }

  // The cited passage in its document; `requestId` gives the document page its "Back to the answer".
  function passageUrl(citation, requestId) {
    const params = new URLSearchParams();
    if (citation.char_end > citation.char_start) {
      params.set("start", citation.char_start);
      params.set("end", citation.char_end);
    }
    if (requestId) params.set("answer", requestId);
    const query = params.toString();
    return `/documents/${citation.document_id}/${query ? `?${query}` : ""}#passage`;
  }

  // The answer text with each [marker] that names a citation turned into a link to it. A markdown
  // table in it (a comparison's rows, one per document: "| Title | quote [1] |") is shown as a
  // table; everything is built from text nodes, never parsed as HTML, so no cell can carry markup.
  function answerParagraph(text, citations, prefix = "") {
    const byMarker = new Map();
    for (const c of citations) {
      byMarker.set(String(c.citation_id), c);
      if (c.doc_id) byMarker.set(String(c.doc_id), c);
    }
    const blocks = answerBlocks(text);
    if (blocks.length === 1 && !blocks[0].rows) return withMarkers(el("p", { class: "answer-text" }), text, byMarker, prefix);
    const box = el("div", { class: "answer-text answer-blocks" });
    for (const block of blocks) {
      if (block.rows) box.append(answerTable(block.rows, byMarker, prefix));
      else if (block.text.trim()) box.append(withMarkers(el("p"), block.text.replace(/^\n+|\n+$/g, ""), byMarker, prefix));
    }
    return box;
  }

  function withMarkers(node, text, byMarker, prefix) {
    let last = 0;
    for (const match of text.matchAll(/\[([^\[\]]{1,40})\]/g)) {
      const citation = byMarker.get(match[1]);
      if (!citation) continue;
      node.append(text.slice(last, match.index));
      node.append(el("a", { href: `#${prefix}cite-${citation.citation_id}`, class: "marker", title: citation.title, text: match[0] }));
      last = match.index + match[0].length;
    }
    node.append(text.slice(last));
    return node;
  }

  // The answer cut into text and tables: a table is a run of lines starting and ending with "|",
  // its second line a rule ("| --- | --- |").
  const TABLE_LINE = /^\s*\|.*\|\s*$/;
  const RULE_LINE = /^\s*\|(\s*:?-{3,}:?\s*\|)+\s*$/;
  function answerBlocks(text) {
    const lines = text.split("\n");
    const blocks = [];
    let pending = [];
    const flush = () => { if (pending.length) blocks.push({ text: pending.join("\n") }); pending = []; };
    for (let i = 0; i < lines.length; i++) {
      if (TABLE_LINE.test(lines[i]) && i + 1 < lines.length && RULE_LINE.test(lines[i + 1])) {
        flush();
        const rows = [cells(lines[i])];
        i += 2;
        while (i < lines.length && TABLE_LINE.test(lines[i])) rows.push(cells(lines[i++]));
        i--;
        blocks.push({ rows });
      } else pending.push(lines[i]);
    }
    flush();
    return blocks;
  }

  function cells(line) {
    return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
  }

  function answerTable(rows, byMarker, prefix) {
    const [head, ...body] = rows;
    return el("table", { class: "answer-table" },
      el("thead", {}, el("tr", {}, ...head.map((cell) => el("th", { scope: "col", text: cell })))),
      el("tbody", {}, ...body.map((row) => el("tr", {}, ...row.map((cell, n) => (
        n === 0 ? el("th", { scope: "row", text: cell }) : withMarkers(el("td"), cell, byMarker, prefix)
      ))))));
  }

  function score(value) { return typeof value === "number" ? value.toFixed(2) : "–"; }

  // A source's search scores, for whoever checks the ranking: behind a collapsed "Details".
  function sourceDetails(citation) {
    return el("details", { class: "source-details" },
      el("summary", { class: "muted small", text: "Details" }),
      el("span", { class: "muted small", text: `Search scores: similarity ${score(citation.similarity_score)} · rank ${score(citation.rank_score)}` }));
  }

  // The API's generic "I don't know" (its `message`, kept as the spec words it) in plain words on
  // the page; its exact wording stays behind "Details". Specific messages (which clause a document
  // lacks, which document is meant) are plain already and shown as they are.
  const NOT_FOUND_MESSAGE = "Information not found in the knowledge base.";
  function messageView(message) {
    if (message !== NOT_FOUND_MESSAGE) return [el("p", { class: "notice", text: message })];
    return [
      el("p", { class: "notice", "data-flag": "not-found", text: "The documents searched do not say." }),
      el("details", { class: "answer-details" },
        el("summary", { class: "muted small", text: "Details" }),
        el("span", { class: "muted small", text: `The service's message: “${message}”` })),
    ];
  }

  // Work product: the answer as a DOCX memo (citations as footnotes), or on the clipboard as text
  // with its references. Both come from the server, which records the export.
  function workProduct(result) {
    const id = encodeURIComponent(result.request_id || "");
    const status = el("span", { class: "muted small", role: "status" });
    const copy = el("button", { type: "button", class: "secondary", "data-action": "copy-citations", text: "Copy with citations" });
    copy.addEventListener("click", async () => {
      try {
        const response = await fetch(`/ask/${id}/citations.txt`, { credentials: "same-origin" });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const text = await response.text();
        if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(text);
        else {
          const area = el("textarea", { class: "visually-hidden" });
          area.value = text;
          document.body.append(area);
          area.select();
          document.execCommand("copy");
          area.remove();
        }
        status.textContent = "Copied, with its citations.";
      } catch (error) {
        status.textContent = `Could not copy: ${error.message}`;
      }
    });
    return el("p", { class: "work-product" },
      el("a", { href: `/ask/${id}/memo.docx`, class: "button secondary", download: "", text: "Export memo (DOCX)" }),
      " ", copy, " ", status);
  }

  function render(result, query) {
    answerBox.replaceChildren();
    answerBox.hidden = false;
    const citations = result.citations || [];
    const flags = result.flags || {};
    const badges = el("p", { class: "flags" });
    for (const [key, [label, kind]] of Object.entries(FLAG_LABELS)) {
      if (flags[key]) badges.append(el("span", { class: `badge ${kind}`, "data-flag": key, text: label }));
    }
    if (typeof result.confidence_score === "number" && result.answer) { // no "Confidence 0%" over "not found"
      badges.append(el("span", { class: "badge", "data-flag": "confidence", text: `Confidence ${Math.round(result.confidence_score * 100)}%` }));
    }
    answerBox.append(el("h2", { text: "Answer" }), badges);
    if (result.answer) answerBox.append(answerParagraph(result.answer, citations));
    if (result.replaces_streamed_text) {
      answerBox.append(el("p", { class: "notice", "data-flag": "replaced", text: "Checking the citations changed the answer: this replaces the draft shown while it was written." }));
    }
    if (result.message) answerBox.append(...messageView(result.message));
    const candidates = (result.clarification && result.clarification.candidates) || [];
    if (candidates.length) {
      // The question fits several documents: each is a button that asks again about that one alone.
      if (!result.message) answerBox.append(el("p", { class: "notice", text: result.clarification.message }));
      const list = el("ul", { class: "follow-ups clarification" });
      for (const candidate of candidates) {
        const pick = el("button", { type: "button", class: "link", "data-document-id": candidate.document_id, text: `Ask about “${candidate.title}” only` });
        pick.addEventListener("click", () => {
          const body = requestBody();
          body.query = query || body.query; // the question answered, not what the box holds now (empty after a reload)
          body.filters = { ...(body.filters || {}), document_ids: [candidate.document_id] };
          send(body);
        });
        list.append(el("li", {}, pick));
      }
      answerBox.append(el("h3", { text: "Which document?" }), list);
    }
    const tables = (result.clarification && result.clarification.review_tables) || [];
    if (tables.length) {
      // Too many documents to list: a review table of them is one click away.
      const list = el("ul", { class: "follow-ups clarification" });
      for (const table of tables) {
        list.append(el("li", {}, el("a", { href: table.url, "data-case-id": table.case_id, text: `Build a review table for “${table.case}”` })));
      }
      answerBox.append(list);
    }
    if (result.disclaimer) answerBox.append(el("p", { class: "muted small", text: result.disclaimer }));

    if (citations.length) {
      const list = el("ol", { class: "citations" });
      for (const c of citations) {
        list.append(el("li", { id: `cite-${c.citation_id}`, value: /^\d+$/.test(c.citation_id) ? c.citation_id : null },
          el("a", { href: passageUrl(c, result.request_id), class: "citation-link", text: c.title }),
          el("span", { class: "muted", text: ` · page ${c.page}${c.page_end && c.page_end !== c.page ? `–${c.page_end}` : ""}` }),
          el("blockquote", { text: c.snippet }),
          sourceDetails(c)));
      }
      answerBox.append(el("h3", { text: "Sources" }), list);
    }

    const followUps = result.follow_up_questions || [];
    if (followUps.length) {
      const list = el("ul", { class: "follow-ups" });
      for (const question of followUps) {
        const ask = el("button", { type: "button", class: "link", text: question });
        ask.addEventListener("click", () => { form.elements.query.value = question; form.requestSubmit(); });
        list.append(el("li", {}, ask));
      }
      answerBox.append(el("h3", { text: "Follow-up questions" }), list);
    }

    if (result.reasoning) answerBox.append(reasoningSteps(result.reasoning, citations));
    if (result.agent) answerBox.append(agentTrace(result.agent));

    const timing = (result.provenance && result.provenance.timing) || {};
    const rows = el("tbody");
    for (const [stage, ms] of Object.entries(timing.stages || {})) rows.append(el("tr", {}, el("td", { title: stage, text: stageLabel(stage) }), el("td", { text: `${Number(ms).toFixed(1)} ms` })));
    rows.append(el("tr", { class: "total" }, el("td", { text: "Total" }), el("td", { text: `${Number(timing.total_ms || 0).toFixed(1)} ms` })));
    answerBox.append(el("details", { class: "timing" }, el("summary", { text: "Time taken, step by step" }), el("table", { class: "list compact" }, rows)));
    if (result.request_id && !result.dry_run) answerBox.append(workProduct(result));
    answerBox.append(el("p", { class: "muted small", text: `Request ${result.request_id || ""}` }));
  }

  const NOT_FOUND_STEP = {
    no_passages: "No passage was found for this part (or none fitted the context's token budget).",
    not_in_passages: "Not found in the passages searched for this part.",
    low_confidence: "The answer found for this part was too uncertain to use.",
    unsupported: "The answer found for this part made claims its passages do not support, so it was not used.",
  };

  // Chain of thought: the sub-questions, and (with show_cot_steps) each one's cited answer.
  function reasoningSteps(reasoning, citations) {
    const list = el("ol", { class: "reasoning-steps" });
    const steps = reasoning.steps || reasoning.sub_questions.map((question) => ({ question }));
    for (const step of steps) {
      const item = el("li", {}, el("strong", { text: step.question }));
      if (step.intermediate_answer) item.append(answerParagraph(step.intermediate_answer, citations));
      else if ("intermediate_answer" in step) item.append(el("p", { class: "muted", text: NOT_FOUND_STEP[step.not_found_reason] || "Not found in the sources." }));
      if (typeof step.confidence_score === "number" && step.intermediate_answer) {
        item.append(el("span", { class: "muted small", text: `Confidence ${Math.round(step.confidence_score * 100)}%` }));
      }
      list.append(item);
    }
    const skipped = reasoning.skipped_sub_questions || [];
    return el("details", { class: "reasoning", open: reasoning.steps ? "" : null },
      el("summary", { text: `Reasoning (${reasoning.strategy === "compare" ? "comparison" : "several parts"}): ${steps.length} part(s)` }),
      list,
      skipped.length ? el("p", { class: "muted small", text: `Not reasoned through separately (over the limit): ${skipped.join(" ")}` }) : null);
  }

  // Agentic mode's trace: the decomposition and plan, then each review with its tool call, the
  // call's arguments and what it found.
  const INTENTS = { qa: "a question to answer", list: "a request for a list", summarize: "a request for a summary", compare: "a comparison" };
  const STRATEGIES = { keyword: "keywords", semantic: "meaning", hybrid: "meaning and keywords" };
  const STOPPED = {
    enough: "It stopped when it had enough.", clarify: "It stopped to ask you to narrow the question.",
    max_tool_calls: "It stopped at its limit of searches.", time_budget: "It stopped at its time limit.", no_next_call: "It stopped when no search was left to try.",
  };

  // Pipeline stages in words, for the timing table.
  const STAGE_LABELS = {
    sanitize: "Checking the question", cache_lookup: "Looking for a saved answer", enhance: "Reading the question",
    retrieve: "Search", rank: "Ranking passages", rerank: "Re-reading the best passages", agent: "Agent's research",
    reasoning_search: "Searching for each part", reasoning: "Reasoning over the parts", select_template: "Choosing the template",
    build_context: "Gathering the passages", build_prompt: "Preparing the prompt", generate: "Writing the answer",
    postprocess: "Checking the citations", verify: "Verifying the answer", assemble: "Assembling the reply",
    cache_store: "Saving the answer", record: "Recording in the audit log",
  };
  function stageLabel(key) {
    const name = key.replace(/_ms$/, "");
    if (STAGE_LABELS[name]) return STAGE_LABELS[name];
    const words = name.replace(/_/g, " ");
    return words.charAt(0).toUpperCase() + words.slice(1);
  }

  function agentTrace(agent) {
    const d = agent.decomposition || {};
    const plan = agent.plan || {};
    const constraints = (d.constraints || []).map((c) => `${c.field} ${c.operator} ${JSON.stringify(c.value)}`).join("; ") || "none";
    const steps = el("ol", { class: "agent-steps" });
    for (const step of agent.steps || []) {
      const review = step.review || {};
      const found = step.result;
      // The step as a sentence ("Searched “…” for “governing law”: 8 passages."); the exact call
      // stays one click away for whoever checks the agent's work.
      const item = el("li", {}, el("span", { class: "agent-step", text: found ? found.summary : review.reason || "Decided what to do next." }));
      if (found && review.reason) item.append(el("p", { class: "muted small", text: `Why: ${review.reason}` }));
      const call = review.next_tool_call;
      if (call) item.append(el("details", { class: "tool-call" }, el("summary", { class: "muted small", text: "Exact call" }), el("pre", { text: `${call.tool}(${JSON.stringify(call.args)})` })));
      steps.append(item);
    }
    return el("details", { class: "agent-trace" },
      el("summary", { text: `How the agent researched it: ${agent.tool_calls} search${agent.tool_calls === 1 ? "" : "es"}` }),
      el("p", { class: "muted small", text: `Understood as ${INTENTS[d.intent] || d.intent}; conditions: ${constraints}; searching by ${STRATEGIES[plan.strategy] || plan.strategy} in ${(plan.target_buckets || []).join(", ") || "all the documents"}. ${STOPPED[agent.stopped] || ""}` }),
      steps);
  }

  function showError(result) {
    answerBox.hidden = false;
    answerBox.replaceChildren(el("p", { class: "error", role: "alert", text: Lexrag.errorText(result) }));
  }

  // One Server-Sent Event ("event: name" and "data: {json}" lines) as {name, data}; null if unreadable.
  function parseEvent(block) {
    let name = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    try { return { name, data: JSON.parse(data) }; } catch (_) { return null; }
  }

  // The draft while the model writes: plain text (never HTML), replaced by render() at the end.
  function showDraft(sources) {
    const text = el("p", { class: "answer-text draft" });
    const note = sources.length ? `Writing from ${sources.length} passage(s); citations are checked when it is done…` : "Writing…";
    answerBox.replaceChildren(el("h2", { text: "Answer" }), text, el("p", { class: "notice draft-note", text: note }));
    answerBox.hidden = false;
    return text;
  }

  // Asks with "stream": true and renders the events (meta, sources, delta…, then result or error). Resolves
  // true once a result or an error is shown, false when streaming did not work (no stream, the
  // connection dropped before the end): the caller then asks without streaming.
  async function streamAnswer(body, onWriting) {
    let response;
    try {
      response = await fetch("/api/v1/rag/query", {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "text/event-stream", "Content-Type": "application/json", "X-CSRFToken": Lexrag.csrfToken() },
        body: JSON.stringify({ ...body, stream: true }),
      });
    } catch (_) {
      return false;
    }
    const type = response.headers.get("Content-Type") || "";
    if (!type.startsWith("text/event-stream") || !response.body) {
      if (!type.startsWith("application/json")) return false;
      const parsed = await response.json().catch(() => null); // refused before streaming began
      if (!response.ok) showError({ status: response.status, body: parsed });
      else {
        render(parsed, body.query);
        answered(body.query, parsed);
      }
      return true;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "", draft = null;
    for (;;) {
      let chunk;
      try { chunk = await reader.read(); } catch (_) { return false; }
      if (chunk.done) return false; // ended without its result
      buffer += chunk.value.replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (!event) continue;
        if (event.name === "sources") { // ("meta" came first: the question was taken, the search runs)
          onWriting();
          draft = showDraft(event.data.sources || []);
        } else if (event.name === "delta" && draft) {
          draft.append(event.data.text);
        } else if (event.name === "result") {
          render(event.data, body.query);
          answered(body.query, event.data);
          return true;
        } else if (event.name === "error") {
          showError({ status: event.data.status, body: event.data });
          return true;
        }
      }
    }
  }

  async function pollJob(pollUrl, started, query) {
    for (;;) {
      const result = await Lexrag.api(pollUrl);
      if (!result.ok) return showError(result);
      const job = result.body;
      if (job.status === "succeeded") {
        render(job.result, query);
        return answered(query, job.result);
      }
      if (job.status === "failed") return showError({ status: (job.error && job.error.status) || 500, body: job.error });
      statusLine.textContent = `${job.status === "queued" ? "Queued" : "Working"}… ${((performance.now() - started) / 1000).toFixed(0)} s`;
      await Lexrag.sleep(1000);
    }
  }

  // --- The conversation: earlier turns above the latest answer, each at its own address ------

  const threadList = document.getElementById("thread");
  const threadBar = document.getElementById("thread-bar");
  const conversation = { id: "", earlier: 0 };
  let current = null; // the turn shown in #answer: { query, result }

  function newConversationId() {
    const random = window.crypto && crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
    return `conv_${random.replace(/-/g, "")}`;
  }

  // An earlier turn, compact: the question, the answer with its markers, the sources.
  function turnView(turn, index) {
    const prefix = `t${index}-`;
    const result = turn.result || {};
    const citations = result.citations || [];
    const item = el("li", { class: "turn", "data-request-id": result.request_id || "" },
      el("p", { class: "turn-question" }, el("strong", { text: "Q: " }), turn.query));
    if (turn.askedBy) item.append(el("p", { class: "muted small", text: `Asked by ${turn.askedBy}` }));
    if (result.answer) item.append(answerParagraph(result.answer, citations, prefix));
    else if (result.message) item.append(...messageView(result.message));
    else item.append(el("p", { class: "notice", text: turn.errorType ? `Failed: ${turn.errorType}` : "No answer." }));
    if (citations.length) {
      const list = el("ol", { class: "citations compact" });
      for (const c of citations) {
        list.append(el("li", { id: `${prefix}cite-${c.citation_id}`, value: /^\d+$/.test(c.citation_id) ? c.citation_id : null },
          el("a", { href: passageUrl(c, result.request_id), class: "citation-link", text: c.title }),
          el("span", { class: "muted", text: ` · page ${c.page}` })));
      }
      item.append(list);
    }
    if (result.request_id) item.append(el("p", { class: "muted small" }, el("a", { href: `/ask/${encodeURIComponent(result.request_id)}/`, text: "Open this answer" })));
    return item;
  }

  function showThreadBar() {
    threadBar.hidden = !current && conversation.earlier === 0;
    // The whole conversation as one memo, once it has more than one answer of the user's own.
    const memo = document.getElementById("conversation-memo");
    memo.hidden = !(conversation.id && conversation.earlier > 0);
    if (!memo.hidden) memo.href = `/conversations/${encodeURIComponent(conversation.id)}/memo.docx`;
    threadBar.querySelector(".count").textContent = conversation.earlier
      ? `Conversation: ${conversation.earlier} earlier question${conversation.earlier === 1 ? "" : "s"} above; follow-ups keep their context.`
      : "Follow-up questions keep this answer's context.";
  }

  // A new answer arrived: the one shown moves up into the thread, the address becomes the answer's.
  function answered(query, result) {
    if (current) {
      threadList.append(turnView(current, conversation.earlier));
      conversation.earlier += 1;
    }
    current = { query, result };
    answerBox.prepend(el("p", { class: "turn-question" }, el("strong", { text: "Q: " }), query));
    showThreadBar();
    if (result.request_id && !result.dry_run) {
      const url = `/ask/${encodeURIComponent(result.request_id)}/`;
      if (window.location.pathname !== url) history.pushState({ requestId: result.request_id }, "", url);
    }
  }

  function newConversation() {
    threadList.replaceChildren();
    conversation.id = "";
    conversation.earlier = 0;
    current = null;
    answerBox.hidden = true;
    answerBox.replaceChildren();
    form.elements.query.value = "";
    showThreadBar();
    history.pushState({}, "", "/ask/");
    form.elements.query.focus();
  }
  document.getElementById("new-conversation").addEventListener("click", newConversation);
  // Back and Forward between answers: the server renders each address.
  window.addEventListener("popstate", () => window.location.reload());

  // The question's length as the API counts it (spaces collapsed), against its limit: shown as
  // the user types, and a question over the limit is refused here with the API's own words.
  const question = form.elements.query;
  const maxLength = Number(question.dataset.maxLength);
  const counter = document.getElementById("question-count");
  function questionLength() { return question.value.trim().replace(/\s+/g, " ").length; }
  function tooLongMessage(length) { return `The query is ${length} characters long; the limit is ${maxLength}.`; }
  function updateCounter() {
    const left = maxLength - questionLength();
    counter.textContent = left >= 0 ? `${left} character${left === 1 ? "" : "s"} left` : `${-left} character${left === -1 ? "" : "s"} over the limit of ${maxLength}`;
    counter.classList.toggle("error", left < 0);
  }
  question.addEventListener("input", updateCounter);
  updateCounter();

  async function submit(event) {
    event.preventDefault();
    updateCounter();  // the value may have been set by a follow-up or a re-run
    const body = requestBody();
    if (!body.query) {
      showError({ status: 400, body: { message: "Type a question first." } });
      return;
    }
    if (questionLength() > maxLength) {
      showError({ status: 400, body: { error_type: "InvalidQuery", message: tooLongMessage(questionLength()) } });
      return;
    }
    await send(body);
  }

  async function send(body) {
    if (!conversation.id) conversation.id = newConversationId();
    body.conversation_id = conversation.id;
    button.disabled = true;
    answerBox.hidden = true;
    const started = performance.now();
    const ticker = setInterval(() => { statusLine.textContent = `Searching and answering… ${((performance.now() - started) / 1000).toFixed(1)} s`; }, 200);
    try {
      const writing = () => { clearInterval(ticker); statusLine.textContent = "Writing the answer…"; };
      if (body.mode !== "async" && await streamAnswer(body, writing)) return;
      const result = await Lexrag.api("/api/v1/rag/query", { method: "POST", body });
      clearInterval(ticker);
      if (!result.ok) showError(result);
      else if (result.status === 202 || result.body.poll_url) await pollJob(result.body.poll_url, started, body.query);
      else {
        render(result.body, body.query);
        answered(body.query, result.body);
      }
    } finally {
      clearInterval(ticker);
      statusLine.textContent = "";
      button.disabled = false;
    }
  }

  form.addEventListener("submit", submit);
  // At /ask/<request_id>/: the stored answer with the conversation's earlier turns, ready for a
  // follow-up (when the conversation is the viewer's own; an admin reading another's starts anew).
  const thread = JSON.parse(document.getElementById("thread-data").textContent);
  if (thread && thread.turns && thread.turns.length) {
    const turns = thread.turns;
    turns.slice(0, -1).forEach((turn, index) => {
      threadList.append(turnView({ query: turn.query, result: turn.result, errorType: turn.error_type, askedBy: turn.asked_by }, index));
    });
    conversation.earlier = turns.length - 1;
    conversation.id = thread.own ? thread.conversation_id : "";
    const last = turns[turns.length - 1];
    fillForm({ query: "", options: last.options });
    if (last.result) render(last.result, last.query);
    else showError({ status: 500, body: { message: `This question failed (${last.error_type || "error"}); ask it again.` } });
    if (last.asked_by) answerBox.prepend(el("p", { class: "notice", text: `Asked by ${last.asked_by}: “${last.query}”` }));
    else answerBox.prepend(el("p", { class: "turn-question" }, el("strong", { text: "Q: " }), last.query));
    current = { query: last.query, result: last.result || {} };
    showThreadBar();
    updateCounter();
  }
  const rerun = JSON.parse(document.getElementById("rerun-data").textContent);
  if (rerun) {
    fillForm(rerun);
    form.requestSubmit();
  }
})();
