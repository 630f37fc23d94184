"""Statements, kernels and device functions: a function's `ast` to IR.

One `KernelContext` lives for the translation of one kernel variant; a `Translator` translates
one function body (the kernel's, or a `@pk.func`'s for one call signature) within it.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.dtypes import ArrayType, DType
from pykern.errors import CompileError, KernelTypeError
from pykern.frontend.tuples import TupleTranslator
from pykern.frontend.values import TupleValue
from pykern.frontend.depth import Splitter, recursion_room
from pykern.frontend.exprs import Value, has_effects, is_compile_time_object
from pykern.frontend.flow import Assignments
from pykern.frontend.source import KernelSource, is_missing, load_source
from pykern.frontend.typerules import PyConst


# bytes of pk.local arrays one invocation may have: lavapipe compiles a kernel with 16 KiB in
# about a second, with 64 KiB in 18 s, 128 KiB in 90 s, 256 KiB in more than two minutes;
# GPUs spill such arrays to slow scratch memory long before
MAX_LOCAL_BYTES = 16 * 1024


@dataclass
class KernelContext:
    """What the translations of a kernel and of the device functions it calls share."""

    debug: bool
    array_types: dict[str, ArrayType] = field(default_factory=dict)  # kernel-level array names
    decls: dict[str, ir.ArrayDecl] = field(default_factory=dict)  # pk.shared / pk.local
    access: dict[str, ir.Access] = field(default_factory=dict)  # of array parameters
    functions: list[ir.Function] = field(default_factory=list)  # callees before callers
    specialisations: dict[tuple, ir.Function] = field(default_factory=dict)
    call_stack: list[str] = field(default_factory=list)  # device functions being translated
    # a pk.barrier() was translated, in the kernel or a device function: it is in the IR then,
    # as `block` only leaves out statements it does not translate (after a return, in the
    # untaken branch of a constant `if`) and a translated function stays in `functions`
    has_barrier: bool = False
    # a pk.coop_* call was translated: tiles are subgroup-wide, so (as with a barrier) every
    # invocation of a subgroup must run them and the kernel is not masked
    uses_tiles: bool = False
    # device functions that return a tuple: their name -> (slot array, element type) each
    tuple_returns: dict[str, tuple[tuple[str, DType], ...]] = field(default_factory=dict)

    def return_slot(self, t: DType, loc: ir.Loc) -> str:
        """A new hidden one-element pk.local array that carries one element of a returned
        tuple from a device function to its caller."""
        n = len(self.decls)
        while f"_pk_ret{n}" in self.array_types:
            n += 1
        name = f"_pk_ret{n}"
        self.decls[name] = ir.ArrayDecl(name=name, dtype=t, shape=(1,),
                                        space=ir.MemorySpace.LOCAL, loc=loc)
        self.array_types[name] = ArrayType(t, 1)
        return name


class Translator(TupleTranslator):
    """Translates one function body. For a kernel, `params` are its scalar parameters and
    `aliases` maps each array parameter to itself; for a device function, `params` is empty,
    `scalar_args` become locals and `aliases` maps array parameters to the caller's arrays."""

    def __init__(self, src: KernelSource, ctx: KernelContext, params: Mapping[str, DType],
                 aliases: Mapping[str, str], constants: Mapping[str, object],
                 function: str | None = None):
        self.src = src
        self.ctx = ctx
        self.params = dict(params)
        self.aliases = dict(aliases)
        self.constants = dict(constants)
        self.function = function  # the device function's name, None in a kernel
        self.return_type: DType | None = None
        self.locals: dict[str, ir.Local] = {}
        self.tuple_vars: dict[str, tuple[str, ...]] = {}  # variables holding a tuple: elements
        self.tuple_var_locs: dict[str, ir.Loc] = {}  # where each got its length and types
        self.static_values: dict[str, int] = {}  # pk.static_range variables in scope: values
        self.assigned = assigned_names(src.tree)
        self.loop_depth = 0
        self.flow = Assignments()
        self.splitter = Splitter(self.fresh_local)
        self.temporaries = 0

    # ------------------------------------------------------------ plumbing

    def loc(self, node: ast.AST) -> ir.Loc:
        return self.src.loc(node)

    def error(self, node: ast.AST, message: str, cls: type[CompileError] = CompileError
              ) -> CompileError:
        return self.src.error(node, message, cls)

    def fresh_local(self, t: DType, loc: ir.Loc) -> str:
        """A new local no name of the function's can clash with (for a piece of a deep
        expression)."""
        while True:
            name = f"_pk_tmp{self.temporaries}"
            self.temporaries += 1
            if not (name in self.assigned or name in self.locals or name in self.params
                    or name in self.aliases or name in self.constants
                    or not is_missing(self.src.lookup(name))):
                break
        self.locals[name] = ir.Local(name=name, type=t, loc=loc)
        return name

    def note_access(self, array: str, how: ir.Access) -> None:
        if array in self.ctx.access:
            self.ctx.access[array] |= how

    def block(self, stmts: list[ast.stmt]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for stmt in stmts:
            result = self.visit(stmt)
            if result is not None:
                for s in result if isinstance(result, list) else [result]:
                    out.extend(self.splitter.stmt(s))  # the backends get shallow expressions
            if out and isinstance(out[-1], (ir.Return, ir.Break, ir.Continue)):
                # what follows never runs (also after a compile-time `if` whose branch taken
                # returns): leave it out, as it may not even type-check for this variant
                break
        return tuple(out)

    # ------------------------------------------------------------ assignment

    def assign_local(self, name: str, value: Value, node: ast.AST,
                     declared: DType | None = None) -> ir.Stmt:
        """`name = value`: the first assignment (or an annotation) gives the variable its type;
        later ones must match it (a Python number converts)."""
        if name in self.aliases:
            raise self.error(node, f"array '{name}' cannot be re-assigned")
        self.refuse_tuple_variable(name, node)
        local = self.locals.get(name)
        if local is None:
            t = declared if declared is not None else self.strong(value, node).type
            local = self.locals[name] = ir.Local(name=name, type=t, loc=self.loc(node))
        elif declared is not None and declared != local.type:
            raise self.error(node, f"'{name}' is declared {declared.name} here but has type "
                                   f"{local.type.name} since {local.loc}", KernelTypeError)
        if declared is None and isinstance(value, ir.Expr) and value.type != local.type:
            raise self.error(node, f"cannot assign a {value.type.name} value to '{name}', which "
                                   f"has type {local.type.name} since {local.loc} (convert it "
                                   f"explicitly, e.g. pk.{local.type.name}(...))",
                             KernelTypeError)
        assign = ir.Assign(name=name, value=self.typed(value, local.type, node),
                           loc=self.loc(node))
        self.flow.assign(name, assign.loc)
        return assign

    def refuse_tuple_variable(self, name: str, node: ast.AST) -> None:
        """A variable that holds a tuple cannot become a scalar one."""
        if name in self.tuple_vars:
            raise self.error(node, f"'{name}' holds a tuple since {self.tuple_var_locs[name]}: "
                                   "it cannot take a single value", KernelTypeError)

    def store(self, target: ast.Subscript, value: Value, node: ast.AST) -> ir.Stmt:
        """`a[i] = value`: the value is converted to the array's dtype, as numpy's setitem does.
        `t[k] = value` for a variable holding a tuple and a constant k assigns its element."""
        if isinstance(target.value, ast.Name) and target.value.id in self.tuple_vars:
            return self.store_tuple_element(target.value.id, target, value, node)
        array = self.array_name(target.value)
        if array is None:
            raise self.error(target, "only arrays can be assigned to by index")
        self.note_access(array, ir.Access.WRITE)
        dtype = self.ctx.array_types[array].dtype
        return ir.Store(array=array, indices=self.indices(array, target),
                        value=self.typed(value, dtype, node), loc=self.loc(node))

    def assign_to(self, target: ast.expr, value: Value, node: ast.AST) -> ir.Stmt:
        if isinstance(target, ast.Name):
            return self.assign_local(target.id, value, node)
        if isinstance(target, ast.Subscript):
            return self.store(target, value, node)
        if isinstance(target, (ast.Tuple, ast.List)):
            raise self.error(target, f"cannot unpack a single value into {len(target.elts)} "
                                     "targets: only a tuple unpacks", KernelTypeError)
        raise self.error(target, f"cannot assign to {ast.unparse(target)}")

    def visit_Assign(self, node: ast.Assign) -> list[ir.Stmt] | None:
        if isinstance(node.value, ast.Call) and self.resolve(node.value.func) in (bi.shared,
                                                                                   bi.local):
            return self.declare_array(node)
        value = self.visit(node.value)
        if isinstance(value, TupleValue):
            return self.assign_tuple(node, value)
        return [self.assign_to(t, value, node) for t in node.targets]

    def declare_array(self, node: ast.Assign) -> None:
        """`buf = pk.shared(dtype, shape)` / `pk.local(dtype, shape)`: a new array name."""
        call = node.value
        assert isinstance(call, ast.Call)
        space = ir.MemorySpace.SHARED if self.resolve(call.func) is bi.shared \
            else ir.MemorySpace.LOCAL
        what = f"pk.{space.value}"
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise self.error(node, f"assign {what}(...) to one plain name")
        if self.function is not None:
            raise self.error(call, f"{what}() arrays are declared in the kernel; pass them to "
                                   "device functions as arguments")
        if len(call.args) != 2 or call.keywords:
            raise self.error(call, f"{what}() takes (dtype, shape)")
        dtype = self.resolve(call.args[0])
        if not isinstance(dtype, DType) and dtype not in (int, float, bool):
            raise self.error(call.args[0], f"the dtype of {what}() must be a pykern type such as "
                                           "pk.f32", KernelTypeError)
        shape_node = call.args[1]
        shape_value = self.visit(shape_node)  # a tuple (or a.shape of a declared array) or one int
        parts = shape_value.elements if isinstance(shape_value, TupleValue) else (shape_value,)
        shape = []
        for k, part in enumerate(parts):
            if not (isinstance(part, PyConst) and type(part.value) is int and part.value > 0):
                where = shape_node.elts[k] if isinstance(shape_node, ast.Tuple) else shape_node
                raise self.error(where, f"the shape of {what}() must be positive constant ints")
            shape.append(part.value)
        if not 1 <= len(shape) <= 4:
            raise self.error(shape_node, f"{what}() arrays have 1 to 4 dimensions")
        name = node.targets[0].id
        if name in self.ctx.array_types or name in self.params or name in self.locals:
            raise self.error(node, f"'{name}' is already defined; {what}() needs a new name")
        decl = ir.ArrayDecl(name=name, dtype=dt.as_dtype(dtype), shape=tuple(shape), space=space,
                            loc=self.loc(node))
        if space is ir.MemorySpace.LOCAL:
            self.check_private_memory(decl, node)
        self.ctx.decls[name] = decl
        self.ctx.array_types[name] = ArrayType(decl.dtype, len(shape))
        self.aliases[name] = name
        return None

    def check_private_memory(self, decl: ir.ArrayDecl, node: ast.AST) -> None:
        """All of a kernel's pk.local arrays together stay within MAX_LOCAL_BYTES per
        invocation: drivers keep them in registers or scratch memory, and far past that they
        take minutes to compile or fail outright."""
        total = decl.nbytes + sum(d.nbytes for d in self.ctx.decls.values()
                                  if d.space is ir.MemorySpace.LOCAL)
        if total > MAX_LOCAL_BYTES:
            raise self.error(node, f"pk.local arrays would take {total:,} bytes per invocation "
                                   f"here, more than the limit of {MAX_LOCAL_BYTES:,} (16 KiB): "
                                   "keep large buffers in pk.shared or global arrays")

    def visit_AugAssign(self, node: ast.AugAssign) -> ir.Stmt | list[ir.Stmt]:
        target = node.target
        array = self.array_name(target.value) if isinstance(target, ast.Subscript) else None
        if array is not None:
            return self.augment_element(array, node)
        current = self.visit(ast.copy_location(
            type(target)(**{**target.__dict__, "ctx": ast.Load()}), target))
        value = self.binary(type(node.op), current, self.visit(node.value), node)
        if isinstance(target, ast.Name) and isinstance(value, ir.Expr):
            local_type = self.locals[target.id].type
            if value.type != local_type:
                raise self.error(node, f"'{ast.unparse(node)}' gives {value.type.name}, but "
                                       f"'{target.id}' has type {local_type.name} since "
                                       f"{self.locals[target.id].loc}", KernelTypeError)
        return self.assign_to(target, value, node)

    def augment_element(self, array: str, node: ast.AugAssign) -> list[ir.Stmt]:
        """`a[idx] op= v`: the index evaluated once, as in Python (into locals first where it
        has effects: `a[f()] += 1` calls f once, and reads and writes one element)."""
        assert isinstance(node.target, ast.Subscript)
        self.note_access(array, ir.Access.READ)
        indices = self.indices(array, node.target)
        pre: list[ir.Stmt] = []
        if any(has_effects(e) for e in indices):
            loc = self.loc(node.target)
            staged = []
            for e in indices:
                if not isinstance(e, (ir.Const, ir.LocalRef, ir.ScalarParam, ir.Builtin)):
                    tmp = self.fresh_local(e.type, loc)
                    pre.append(ir.Assign(name=tmp, value=e, loc=loc))
                    self.flow.assign(tmp, loc)
                    e = ir.LocalRef(name=tmp, type=e.type, loc=loc)
                staged.append(e)
            indices = tuple(staged)
        dtype = self.ctx.array_types[array].dtype
        current = ir.ArrayLoad(array=array, indices=indices, type=dtype,
                               loc=self.loc(node.target))
        value = self.binary(type(node.op), current, self.visit(node.value), node)
        self.note_access(array, ir.Access.WRITE)
        return pre + [ir.Store(array=array, indices=indices, value=self.typed(value, dtype, node),
                               loc=self.loc(node))]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ir.Stmt | None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "annotations are only supported on plain variables")
        declared = self.resolve(node.annotation)
        if not isinstance(declared, DType) and declared not in (int, float, bool):
            raise self.error(node.annotation, f"'{ast.unparse(node.annotation)}' is not a scalar "
                                              "type (use pk.i32, pk.f32, ...)", KernelTypeError)
        t = dt.as_dtype(declared)
        if node.value is None:
            return self.declare_local(node.target.id, t, node)
        return self.assign_local(node.target.id, self.visit(node.value), node, declared=t)

    def declare_local(self, name: str, t: DType, node: ast.AnnAssign) -> None:
        """`name: type` alone gives the variable its type; as in Python, it assigns nothing."""
        if name in self.aliases:
            raise self.error(node, f"array '{name}' cannot be re-assigned")
        self.refuse_tuple_variable(name, node)
        local = self.locals.get(name)
        if local is None:
            self.locals[name] = ir.Local(name=name, type=t, loc=self.loc(node))
        elif local.type != t:
            raise self.error(node, f"'{name}' is declared {t.name} here but has type "
                                   f"{local.type.name} since {local.loc}", KernelTypeError)
        self.flow.declare(name, self.loc(node))
        return None

    # ------------------------------------------------------------ control flow

    def visit_If(self, node: ast.If) -> ir.Stmt | list[ir.Stmt]:
        test = self.visit(node.test)
        if isinstance(test, PyConst):
            # decided at compile time: only the branch taken is translated (as Triton's
            # constexpr ifs), so the other may use names or types this variant lacks
            return list(self.block(node.body if test.value else node.orelse))
        cond = self.truth(test, node.test)
        before = self.flow.fork()
        body = self.block(node.body)
        after_body, self.flow.state = self.flow.state, before
        orelse = self.block(node.orelse)
        self.flow.join_branches(after_body, self.flow.state)
        return ir.If(cond=cond, body=body, orelse=orelse, loc=self.loc(node))

    def loop_body(self, node: ast.For | ast.While, runs: str, var: str | None = None
                  ) -> tuple[ir.Stmt, ...]:
        """A loop's body; `runs` says whether it may run zero times (see Assignments)."""
        kind = "for" if isinstance(node, ast.For) else "while"
        self.flow.enter_loop(kind, self.loc(node), var)
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        self.flow.exit_loop(runs)
        return body

    def visit_While(self, node: ast.While) -> ir.Stmt:
        if node.orelse:
            raise self.error(node, "while ... else is not supported in a kernel")
        test = self.visit(node.test)
        cond = self.truth(test, node.test)
        runs = "forever" if isinstance(test, PyConst) and test.value else "maybe"
        return ir.While(cond=cond, body=self.loop_body(node, runs), loc=self.loc(node))

    def visit_For(self, node: ast.For) -> ir.Stmt:
        if node.orelse:
            raise self.error(node, "for ... else is not supported in a kernel")
        it = node.iter
        if isinstance(it, ast.Call) and self.resolve(it.func) is bi.static_range:
            return self.static_for(node)
        if not (isinstance(it, ast.Call) and self.resolve(it.func) is range):
            raise self.error(it, "a kernel's for loop must iterate over range(...)")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a plain name")
        if not 1 <= len(it.args) <= 3 or it.keywords:
            raise self.error(it, f"range() takes 1 to 3 positional arguments, {len(it.args)} given")
        values = [self.visit(a) for a in it.args]
        for v, a in zip(values, it.args):
            if (isinstance(v, PyConst) and type(v.value) is not int) or (
                    isinstance(v, ir.Expr) and not v.type.is_int):
                raise self.error(a, "range() arguments must be integers", KernelTypeError)
        typed = [v for v in values if isinstance(v, ir.Expr)]
        t = typed[0].type if typed else dt.i32
        for v in typed[1:]:
            t = self.unify(ir.Const(value=0, type=t), v)
        if len(values) == 1:
            values = [PyConst(0), values[0], PyConst(1)]
        elif len(values) == 2:
            values.append(PyConst(1))
        if isinstance(values[2], PyConst) and values[2].value == 0:
            raise self.error(it.args[2], "range() step must not be zero")
        start, stop, step = (self.typed(v, t, node.iter) for v in values)
        var = node.target.id
        self.refuse_tuple_variable(var, node.target)
        local = self.locals.get(var)
        if local is not None and local.type != t:
            raise self.error(node.target, f"loop variable '{var}' would be {t.name}, but it has "
                                          f"type {local.type.name} since {local.loc}",
                             KernelTypeError)
        if local is None:
            self.locals[var] = ir.Local(name=var, type=t, loc=self.loc(node.target))
        bounds = [v.value if isinstance(v, PyConst) else None for v in values]
        runs = "once" if None not in bounds and len(range(*bounds)) > 0 else "maybe"
        return ir.ForRange(var=var, start=start, stop=stop, step=step,
                           body=self.loop_body(node, runs, var), loc=self.loc(node))

    def static_for(self, node: ast.For) -> list[ir.Stmt]:
        """`for i in pk.static_range(...)`: the body once per value, `i` a compile-time
        constant in each copy (it indexes tuples, decides `if`s and shapes)."""
        it = node.iter
        assert isinstance(it, ast.Call)
        if not 1 <= len(it.args) <= 3 or it.keywords:
            raise self.error(it, "pk.static_range() takes 1 to 3 positional arguments, "
                                 f"{len(it.args)} given")
        bounds = []
        for arg in it.args:
            value = self.visit(arg)
            if not (isinstance(value, PyConst) and type(value.value) is int):
                raise self.error(arg, "pk.static_range() bounds must be compile-time integers "
                                      "(literals, pk.constexpr parameters or captured globals)",
                                 KernelTypeError)
            bounds.append(value.value)
        if len(bounds) == 3 and bounds[2] == 0:
            raise self.error(it.args[2], "pk.static_range() step must not be zero")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a plain name")
        var = node.target.id
        if var in self.locals or var in self.tuple_vars or var in self.params:
            raise self.error(node.target, f"'{var}' is a variable of the kernel: a "
                                          "pk.static_range loop needs a name of its own")
        for inner in static_loop_exits(node.body):
            raise self.error(inner, f"'{type(inner).__name__.lower()}' cannot leave a "
                                    "pk.static_range loop, whose body is copied once per value")
        out: list[ir.Stmt] = []
        outer = self.static_values.get(var)
        try:
            for value in range(*bounds):
                self.static_values[var] = value
                out.extend(self.block(node.body))
        finally:
            if outer is None:
                self.static_values.pop(var, None)
            else:
                self.static_values[var] = outer
        return out

    def visit_Break(self, node: ast.Break) -> ir.Stmt:
        return self.loop_exit(node, "break", self.flow.leave, ir.Break)

    def visit_Continue(self, node: ast.Continue) -> ir.Stmt:
        return self.loop_exit(node, "continue", self.flow.next_iteration, ir.Continue)

    def loop_exit(self, node: ast.stmt, word: str, flow: Callable[[str], None],
                  stmt: type[ir.Break] | type[ir.Continue]) -> ir.Stmt:
        """`break` or `continue` (`word`), inside a loop only; `flow` records where the
        code after it goes."""
        if not self.loop_depth:
            raise self.error(node, f"'{word}' outside a loop")
        loc = self.loc(node)
        flow(f"the {word} at {loc}")
        return stmt(loc=loc)

    def visit_Return(self, node: ast.Return) -> ir.Stmt | list[ir.Stmt]:
        stmt = self.return_statement(node)
        self.flow.end_path()
        return stmt

    def return_statement(self, node: ast.Return) -> ir.Stmt | list[ir.Stmt]:
        if node.value is None:
            if self.function is not None and self.return_tuple is not None:
                raise self.error(node, f"'{self.function}' returns a tuple elsewhere: every "
                                       "return needs a value")
            if self.function is not None and self.return_type not in (None, dt.void):
                raise self.error(node, f"'{self.function}' returns {self.return_type.name} "
                                       "elsewhere: every return needs a value")
            if self.function is not None:
                self.return_type = dt.void
            return ir.Return(loc=self.loc(node))
        if self.function is None:
            raise self.error(node, "a kernel cannot return a value: write results into an "
                                   "array parameter")
        value = self.visit(node.value)
        if isinstance(value, TupleValue):
            return self.return_tuple_statement(value, node)
        if self.return_tuple is not None:
            raise self.error(node, f"'{self.function}' returns a tuple of "
                                   f"{len(self.return_tuple)} elsewhere, a single value here "
                                   "(all returns need one type)", KernelTypeError)
        if self.return_type is None:
            self.return_type = self.strong(value, node).type
        elif self.return_type == dt.void:
            raise self.error(node, f"'{self.function}' returns no value elsewhere")
        elif isinstance(value, ir.Expr) and value.type != self.return_type:
            raise self.error(node, f"'{self.function}' returns {self.return_type.name} elsewhere,"
                                   f" {value.type.name} here (all returns need one type)",
                             KernelTypeError)
        return ir.Return(value=self.typed(value, self.return_type, node), loc=self.loc(node))

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Assert(self, node: ast.Assert) -> ir.Stmt | None:
        message = ""
        if node.msg is not None:
            msg = self.visit(node.msg)
            if not (isinstance(msg, PyConst) and isinstance(msg.value, str)):
                raise self.error(node.msg, "an assert message must be a constant string")
            message = msg.value
        cond = self.truth(self.visit(node.test), node.test)
        if not self.ctx.debug:
            return None  # checked in debug mode only, as `python -O` drops asserts
        return ir.Assert(cond=cond, message=message or ast.unparse(node.test), loc=self.loc(node))

    def visit_Expr(self, node: ast.Expr) -> ir.Stmt | None:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # a string statement is a comment
        if isinstance(value, ast.Call) and self.resolve(value.func) is bi.barrier:
            if value.args or value.keywords:
                raise self.error(value, "pk.barrier() takes no arguments")
            self.ctx.has_barrier = True
            return ir.Barrier(loc=self.loc(node))
        if isinstance(value, ast.Call) and self.resolve(value.func) is bi.coop_store:
            self.ctx.uses_tiles = True
            keywords = self.coop_keywords(bi.coop_store, ast.unparse(value.func), value)
            return self.coop_store(value.args, keywords, ast.unparse(value.func), value)
        if isinstance(value, ast.Call):
            result = self.visit(value)
            if isinstance(result, (ir.Atomic, ir.Call)):
                return ir.Eval(value=result, loc=self.loc(node))
            if isinstance(result, TupleValue) and result.prelude:
                return list(result.prelude)  # a call of a function that returns a tuple
        raise self.error(node, f"expression statement '{ast.unparse(node)}' has no effect in a "
                               "kernel")

    # ------------------------------------------------------------ device functions

    def device_call(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """A call of a `@pk.func`: specialised for the argument types and the arrays passed."""
        fn = callee.__wrapped__  # type: ignore[attr-defined]
        qualname = fn.__qualname__
        if qualname in self.ctx.call_stack:
            cycle = " -> ".join(self.ctx.call_stack[self.ctx.call_stack.index(qualname):]
                                + [qualname])
            raise self.error(node, f"recursion is not supported in kernels: {cycle}")
        src = callee.source  # type: ignore[attr-defined]
        fargs = src.tree.args
        names = [a.arg for a in fargs.posonlyargs + fargs.args]
        if fargs.vararg or fargs.kwarg or fargs.kwonlyargs or len(names) != len(args):
            raise self.error(node, f"{name}() takes {len(names)} argument(s), {len(args)} given")
        scalars: list[tuple[str, ir.Expr]] = []
        tuples: dict[str, tuple[str, ...]] = {}
        aliases: dict[str, str] = {}
        constants: dict[str, object] = {}
        for pname, arg in zip(names, args):
            array = self.array_name(arg)
            if array is not None:
                # by reference: the body uses the caller's array (a pk.local one is Private
                # memory, which every function of the invocation reaches)
                aliases[pname] = array
                continue
            obj = self.resolve(arg)
            if is_compile_time_object(obj):  # a dtype or @pk.func passed on, compiled in
                constants[pname] = obj
                continue
            value = self.visit(arg)
            if isinstance(value, PyConst) and isinstance(value.value, str):
                constants[pname] = value.value
                continue
            if isinstance(value, TupleValue):
                parts, tuples[pname] = self.tuple_argument(pname, value, arg)
                scalars += parts
                continue
            scalars.append((pname, self.strong(value, arg)))
        key = (id(fn), tuple((n, v.type) for n, v in scalars), tuple(aliases.items()),
               tuple(constants.items()))
        function = self.ctx.specialisations.get(key)
        if function is None:
            function = self.translate_function(callee, src, scalars, aliases, constants, node,
                                               tuples)
            self.ctx.specialisations[key] = function
        call = ir.Call(function=function.name, args=tuple(v for _, v in scalars),
                       type=function.return_type or dt.void, loc=self.loc(node))
        slots = self.ctx.tuple_returns.get(function.name)
        return call if slots is None else self.tuple_result(call, slots, self.loc(node))

    def translate_function(self, callee: object, src: KernelSource,
                           scalars: list[tuple[str, ir.Expr]], aliases: dict[str, str],
                           constants: dict[str, object], node: ast.AST,
                           tuples: dict[str, tuple[str, ...]]) -> ir.Function:
        fn = callee.__wrapped__  # type: ignore[attr-defined]
        name = f"{fn.__name__}_{len(self.ctx.functions)}"
        sub = Translator(src, self.ctx, {}, aliases, constants, function=fn.__name__)
        for pname, value in scalars:
            sub.locals[pname] = ir.Local(name=pname, type=value.type, loc=sub.loc(src.tree))
            sub.flow.assign(pname, sub.locals[pname].loc)
        params = tuple(sub.locals.values())
        for pname, parts in tuples.items():  # a tuple argument: one parameter per element
            sub.tuple_vars[pname] = parts
            sub.tuple_var_locs[pname] = sub.loc(src.tree)
        self.ctx.call_stack.append(fn.__qualname__)
        try:
            with recursion_room(src.nesting_depth):
                body = sub.block(strip_docstring(src.tree.body))
        except CompileError as e:
            # name the call that typed the function this way too (both places matter)
            loc = self.loc(node)
            raise e.called_from(loc.file, loc.line, loc.col,
                                linecache.getline(loc.file, loc.line) or None) from None
        finally:
            self.ctx.call_stack.pop()
        if sub.return_tuple is not None:
            body = sub.end_of_tuple_function(body, sub.loc(src.tree))
            self.ctx.tuple_returns[name] = tuple(zip(sub.return_slots, sub.return_tuple))
        rtype = None if sub.return_type in (None, dt.void) else sub.return_type
        if rtype is not None and not (body and isinstance(body[-1], ir.Return)):
            # falling off the end returns zero of the type, so every path has a value
            zero = ir.Const(value=False if rtype == dt.bool_ else 0.0 if rtype.is_float else 0,
                            type=rtype, loc=sub.loc(src.tree))
            body = body + (ir.Return(value=zero, loc=zero.loc),)
        function = ir.Function(name=name, params=params,
                               locals=tuple(v for v in sub.locals.values() if v not in params),
                               body=body, return_type=rtype, loc=sub.loc(src.tree))
        self.ctx.functions.append(function)
        return function


def translate_kernel(src: KernelSource, params: Mapping[str, DType | ArrayType],
                     constants: Mapping[str, object], workgroup: tuple[int, int, int],
                     debug: bool, grid_ndim: int = 3) -> ir.Kernel:
    """The IR of one kernel variant, for launches with grids of `grid_ndim` dimensions."""
    ctx = KernelContext(debug=debug)
    scalars: dict[str, DType] = {}
    aliases: dict[str, str] = {}
    for name, t in params.items():
        if isinstance(t, ArrayType):
            ctx.array_types[name] = t
            ctx.access[name] = ir.Access.NONE
            aliases[name] = name
        else:
            scalars[name] = t
    tr = Translator(src, ctx, scalars, aliases, constants)
    fn = src.tree
    loc = tr.loc(fn)
    prologue: list[ir.Stmt] = []
    for name in constants:
        if name in tr.assigned:
            raise tr.error(tr.assigned[name], f"constexpr parameter '{name}' cannot be "
                                              "re-assigned")
    for name, t in params.items():
        if name in tr.assigned:
            if isinstance(t, ArrayType):
                raise tr.error(tr.assigned[name], f"array parameter '{name}' cannot be "
                                                  "re-assigned")
            # a scalar parameter the body assigns to becomes a local initialised from it
            tr.locals[name] = ir.Local(name=name, type=t, loc=loc)
            tr.flow.assign(name, loc)
            prologue.append(ir.Assign(name=name, value=ir.ScalarParam(name=name, type=t, loc=loc),
                                      loc=loc))
    body = tr.block(strip_docstring(fn.body))
    # every invocation of a workgroup must reach its barriers (of a subgroup, its tile
    # operations), so a kernel with one is not masked: there the kernel itself tests
    # pk.global_id(d) < pk.grid(d) (as in CUDA)
    masked = not (ctx.has_barrier or ctx.uses_tiles)
    if masked:
        prologue.insert(0, grid_mask(loc, masked_dims(workgroup, grid_ndim)))
    ir_params = tuple(ir.Param(name=n, type=t, access=ctx.access.get(n, ir.Access.NONE), loc=loc)
                      for n, t in params.items())
    return ir.Kernel(name=fn.name, params=ir_params, locals=tuple(tr.locals.values()),
                     body=tuple(prologue) + body, workgroup=workgroup,
                     arrays=tuple(ctx.decls.values()), functions=tuple(ctx.functions),
                     debug=debug, masked=masked, loc=loc)


def strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):
        return body[1:]
    return body


def assigned_names(fn: ast.FunctionDef) -> dict[str, ast.Name]:
    """Names the body binds (Python makes them local to the whole function), each with the
    first place in the source that binds it."""
    names: dict[str, ast.Name] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            first = names.get(node.id)
            if first is None or (node.lineno, node.col_offset) < (first.lineno,
                                                                  first.col_offset):
                names[node.id] = node
    return names


def static_loop_exits(body: list[ast.stmt]) -> list[ast.Break | ast.Continue]:
    """The `break`s and `continue`s of a loop body that would leave that loop (not those of
    the loops inside it)."""
    found: list[ast.Break | ast.Continue] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            found.append(node)
        elif not isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
        else:
            stack.extend(node.orelse if isinstance(node, (ast.For, ast.While)) else [])
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def masked_dims(workgroup: tuple[int, int, int], grid_ndim: int) -> tuple[int, ...]:
    """The dimensions in which an invocation can fall outside the grid: those the grid has, and
    any other the workgroup spans (a dimension the grid lacks is 1 wide, dispatched once)."""
    return tuple(d for d in range(3) if d < grid_ndim or workgroup[d] > 1)


def grid_mask(loc: ir.Loc, dims: tuple[int, ...] = (0, 1, 2)) -> ir.Stmt:
    """`if global_id(d) >= grid(d) for any d in dims: return`, so invocations past the grid do
    nothing."""
    cond: ir.Expr | None = None
    for d in dims:
        past = ir.BinOp(op=ir.BinOpKind.GE,
                        lhs=ir.Builtin(kind=ir.BuiltinKind.GLOBAL_ID, dim=d, type=dt.i32, loc=loc),
                        rhs=ir.Builtin(kind=ir.BuiltinKind.GRID, dim=d, type=dt.i32, loc=loc),
                        type=dt.bool_, loc=loc)
        # a non-short-circuit `|`: both sides are cheap and branch-free code is faster
        cond = past if cond is None else ir.BinOp(op=ir.BinOpKind.BIT_OR, lhs=cond, rhs=past,
                                                  type=dt.bool_, loc=loc)
    return ir.If(cond=cond, body=(ir.Return(loc=loc),), loc=loc)


__all__ = ["KernelContext", "Translator", "load_source", "translate_kernel"]
