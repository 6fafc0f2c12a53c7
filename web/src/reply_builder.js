// Builds an assistant message from the deltas of a streamed chat completion
// (choices[i].delta), keeping its three parts apart: the answer (`content`), the
// model's thinking (`reasoning_content`) and the functions it called (`tool_calls`).
// Nothing from one part ever lands in another, so the answer holds no thinking and
// no call's JSON.
//
// The parts, as stored with the message (store.js):
//   content        the answer, markdown
//   reasoning      the thinking, plain text; absent when the model did not think
//   reasoning_ms   from the first piece of thinking to the first piece of anything
//                  else (or the end of the reply); absent with `reasoning`
//   tool_calls     [{ index, id, type, function: { name, arguments } }], in OpenAI's
//                  shape, ordered by index; `arguments` is JSON text, possibly cut short
//                  when the reply was stopped; absent when the model called nothing

// Appends `piece` to `object[key]` when the server sent text there; anything else
// (a missing field, null, a number) is ignored: the stream is not ours to trust.
function append_text(object, key, piece) {
  if (typeof piece !== 'string' || piece === '') return false;
  object[key] = (object[key] ?? '') + piece;
  return true;
}

export class ReplyBuilder {
  #reply;
  #now;
  #reasoning_started = null;  // ms on #now's clock; null until thinking starts or once it ended

  // `reply`: the assistant message to fill ({ role, content }). `now()`: a clock in ms.
  constructor(reply, now = () => performance.now()) {
    this.#reply = reply;
    this.#now = now;
  }

  // Merges one delta; returns whether it added anything (a delta with only `role`
  // adds nothing).
  add(delta) {
    if (!delta || typeof delta !== 'object') return false;
    const thought = this.#add_reasoning(delta.reasoning_content);
    const answered = append_text(this.#reply, 'content', delta.content);
    const called = Array.isArray(delta.tool_calls) &&
      delta.tool_calls.map((call) => this.#add_tool_call(call)).some(Boolean);
    if (answered || called) this.#end_reasoning();
    return thought || answered || called;
  }

  // Ends the reply (finished, stopped or failed): thinking that was still going on
  // ends here.
  finish() {
    this.#end_reasoning();
  }

  #add_reasoning(piece) {
    if (!append_text(this.#reply, 'reasoning', piece)) return false;
    if (this.#reasoning_started === null && this.#reply.reasoning_ms === undefined) {
      this.#reasoning_started = this.#now();
    }
    return true;
  }

  #end_reasoning() {
    if (this.#reasoning_started === null) return;
    this.#reply.reasoning_ms = this.#now() - this.#reasoning_started;
    this.#reasoning_started = null;
  }

  // The first delta of a call carries its index, id, type and name; later ones its
  // index and pieces of the arguments. Calls may interleave, so each piece goes to
  // the call with its index.
  #add_tool_call(delta) {
    if (!delta || typeof delta !== 'object') return false;
    const calls = (this.#reply.tool_calls ??= []);
    const index = Number.isInteger(delta.index) ? delta.index : Math.max(calls.length - 1, 0);
    let call = calls.find((c) => c.index === index);
    let added = false;
    if (!call) {
      call = { index, id: '', type: 'function', function: { name: '', arguments: '' } };
      calls.push(call);
      calls.sort((a, b) => a.index - b.index);
      added = true;
    }
    if (typeof delta.id === 'string' && delta.id) call.id = delta.id;
    if (typeof delta.type === 'string' && delta.type) call.type = delta.type;
    const fn = delta.function;
    if (fn && typeof fn === 'object') {
      added = append_text(call.function, 'name', fn.name) || added;
      added = append_text(call.function, 'arguments', fn.arguments) || added;
    }
    return added;
  }
}
