import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.graalvm.visualvm.lib.jfluid.heap.FieldValue;
import org.graalvm.visualvm.lib.jfluid.heap.GCRoot;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.HeapSummary;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;
import org.graalvm.visualvm.lib.jfluid.heap.ObjectArrayInstance;
import org.graalvm.visualvm.lib.jfluid.heap.ObjectFieldValue;
import org.graalvm.visualvm.lib.jfluid.heap.PrimitiveArrayInstance;

// The independent reader of HPROF heap dumps the integration tests check `inspect heapdump`'s
// files with: VisualVM's heap library (org.graalvm.visualvm.lib.jfluid.heap, installed by
// scripts/visualvm-heaplib.sh). Not compiled with the other test programs (it needs the library
// on its class path): tests/integration/support/hprof.rs compiles and runs it on JDK 17.
//
// Usage: java -cp <jar>:<classes> HprofCheck FILE [--field CLASS FIELD]... [--static CLASS FIELD]...
//            [--roots-of CLASS]...
//
// Prints one fact per line, tab-separated, the first column naming the fact; text columns
// escape backslash, tab, newline and carriage return as \\ \t \n \r:
//   format   hprofcheck  1
//   class    NAME  CLASS_ID  INSTANCES  INSTANCE_SIZE  ALL_INSTANCES_SIZE   (one per class dump)
//   root     CONSTANT  KIND  COUNT          (CONSTANT: GCRoot's field name for VisualVM's kind)
//   root_unresolved  COUNT                  (roots whose object is neither instance nor class)
//   instances  COUNT                        (instances the iterator gave, arrays included)
//   dangling  COUNT                         (non-null references of instance fields and object
//                                            array elements that resolve to nothing)
//   dangling_static  COUNT                  (the same for classes' static fields)
//   dangling_example  HOLDER_CLASS  HOLDER_ID  FIELD  ID     (up to 10; FIELD is [i] in arrays,
//                                            "static NAME" for static fields)
//   summary  NAME  VALUE                    (Heap.getSummary(): time, live_bytes, ...)
//   field    CLASS  FIELD  INSTANCE_ID  VALUE   (--field; one per instance)
//   static   CLASS  FIELD  VALUE                (--static)
//   roots_of CLASS  INSTANCE_ID  CONSTANTS      (--roots-of; CONSTANTS comma-separated, or -)
//   absent   QUERY  CLASS  FIELD                (a query's class or field is not in the dump;
//                                                FIELD is - for a missing class)
//   end
// A VALUE is null, str:TEXT (a java.lang.String's text), obj:CLASS@ID (another object) or
// prim:TEXT (a primitive, as VisualVM prints it).
public class HprofCheck {
    static final int MAX_EXAMPLES = 10;

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: HprofCheck FILE [--field CLASS FIELD] [--static CLASS FIELD] [--roots-of CLASS]");
            System.exit(2);
        }
        List<String[]> queries = new ArrayList<>();
        for (int i = 1; i < args.length; ) {
            String q = args[i];
            int n = q.equals("--field") || q.equals("--static") ? 2 : q.equals("--roots-of") ? 1 : -1;
            if (n < 0 || i + n >= args.length) {
                System.err.println("HprofCheck: bad query at " + q);
                System.exit(2);
            }
            String[] query = new String[n + 1];
            for (int k = 0; k <= n; k++) {
                query[k] = args[i + k];
            }
            queries.add(query);
            i += n + 1;
        }
        PrintStream out = new PrintStream(
                new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                false, "UTF-8");
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        new HprofCheck(heap, out).run(queries);
        out.flush();
        if (out.checkError()) {
            System.exit(1);
        }
    }

    final Heap heap;
    final PrintStream out;
    final Map<String, String> constants = new HashMap<>();
    // The array elements' raw ids are not public: VisualVM's own offsets, through reflection.
    Method arrayOffset;
    Method readId;
    Object dumpBuffer;
    int idSize;
    long dangling;
    long danglingStatic;
    final List<String> examples = new ArrayList<>();

    HprofCheck(Heap heap, PrintStream out) throws Exception {
        this.heap = heap;
        this.out = out;
        for (Field f : GCRoot.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                constants.put((String) f.get(null), f.getName());
            }
        }
    }

    void run(List<String[]> queries) throws Exception {
        out.println("format\thprofcheck\t1");
        for (JavaClass c : heap.getAllClasses()) {
            out.println("class\t" + esc(c.getName()) + "\t" + c.getJavaClassId() + "\t"
                    + c.getInstancesCount() + "\t" + c.getInstanceSize() + "\t"
                    + c.getAllInstancesSize());
        }
        roots();
        references();
        HeapSummary s = heap.getSummary();
        out.println("summary\ttime\t" + s.getTime());
        out.println("summary\tlive_bytes\t" + s.getTotalLiveBytes());
        out.println("summary\tlive_instances\t" + s.getTotalLiveInstances());
        out.println("summary\tallocated_bytes\t" + s.getTotalAllocatedBytes());
        out.println("summary\tallocated_instances\t" + s.getTotalAllocatedInstances());
        for (String[] q : queries) {
            switch (q[0]) {
                case "--field":
                    field(q[1], q[2]);
                    break;
                case "--static":
                    staticField(q[1], q[2]);
                    break;
                default:
                    rootsOf(q[1]);
            }
        }
        out.println("end");
    }

    String constant(String kind) {
        String c = constants.get(kind);
        return c != null ? c : kind.toUpperCase().replace(' ', '_');
    }

    void roots() {
        Map<String, Long> byKind = new TreeMap<>();
        long unresolved = 0;
        for (GCRoot r : heap.getGCRoots()) {
            byKind.merge(r.getKind(), 1L, Long::sum);
            if (r.getInstance() == null) {
                unresolved++;
            }
        }
        for (Map.Entry<String, Long> e : byKind.entrySet()) {
            out.println("root\t" + constant(e.getKey()) + "\t" + esc(e.getKey()) + "\t" + e.getValue());
        }
        out.println("root_unresolved\t" + unresolved);
    }

    boolean resolves(long id) {
        return id == 0 || heap.getInstanceByID(id) != null || heap.getJavaClassByID(id) != null;
    }

    void example(String holder, long holderId, String field, long id) {
        if (examples.size() < MAX_EXAMPLES) {
            examples.add("dangling_example\t" + esc(holder) + "\t" + holderId + "\t" + esc(field) + "\t" + id);
        }
    }

    long elementId(ObjectArrayInstance a, int index) throws Exception {
        if (arrayOffset == null) {
            arrayOffset = a.getClass().getDeclaredMethod("getOffset");
            arrayOffset.setAccessible(true);
            Field buffer = heap.getClass().getDeclaredField("dumpBuffer");
            buffer.setAccessible(true);
            dumpBuffer = buffer.get(heap);
            Method size = findMethod(dumpBuffer.getClass(), "getIDSize");
            idSize = (Integer) size.invoke(dumpBuffer);
            readId = findMethod(dumpBuffer.getClass(), "getID", long.class);
        }
        // ObjectArrayDump.getOffset(): where the elements start (after the tag, id, stack trace
        // serial, length and class id)
        long elements = (Long) arrayOffset.invoke(a);
        return (Long) readId.invoke(dumpBuffer, elements + (long) index * idSize);
    }

    static Method findMethod(Class<?> c, String name, Class<?>... params) throws NoSuchMethodException {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            try {
                Method m = k.getDeclaredMethod(name, params);
                m.setAccessible(true);
                return m;
            } catch (NoSuchMethodException e) {
                // look in the superclass
            }
        }
        throw new NoSuchMethodException(c.getName() + "." + name);
    }

    void references() throws Exception {
        long instances = 0;
        Iterator<Instance> it = heap.getAllInstancesIterator();
        while (it.hasNext()) {
            Instance i = it.next();
            instances++;
            if (i instanceof PrimitiveArrayInstance) {
                continue;
            }
            if (i instanceof ObjectArrayInstance) {
                ObjectArrayInstance a = (ObjectArrayInstance) i;
                List<Instance> values = a.getValues();
                int n = a.getLength();
                for (int k = 0; k < n; k++) {
                    if (values.get(k) == null) {
                        long id = elementId(a, k);
                        if (!resolves(id)) {
                            dangling++;
                            example(i.getJavaClass().getName(), i.getInstanceId(), "[" + k + "]", id);
                        }
                    }
                }
                continue;
            }
            for (FieldValue fv : i.getFieldValues()) {
                if (fv instanceof ObjectFieldValue && ((ObjectFieldValue) fv).getInstance() == null) {
                    long id = Long.parseLong(fv.getValue());
                    if (!resolves(id)) {
                        dangling++;
                        example(i.getJavaClass().getName(), i.getInstanceId(), fv.getField().getName(), id);
                    }
                }
            }
        }
        for (JavaClass c : heap.getAllClasses()) {
            for (FieldValue fv : c.getStaticFieldValues()) {
                if (fv instanceof ObjectFieldValue && ((ObjectFieldValue) fv).getInstance() == null) {
                    long id;
                    try {
                        id = Long.parseLong(fv.getValue());
                    } catch (NumberFormatException e) {
                        continue; // a synthetic field VisualVM adds (no id)
                    }
                    if (!resolves(id)) {
                        danglingStatic++;
                        example(c.getName(), c.getJavaClassId(), "static " + fv.getField().getName(), id);
                    }
                }
            }
        }
        out.println("instances\t" + instances);
        out.println("dangling\t" + dangling);
        out.println("dangling_static\t" + danglingStatic);
        for (String e : examples) {
            out.println(e);
        }
    }

    List<JavaClass> classesNamed(String name) {
        List<JavaClass> found = new ArrayList<>();
        for (JavaClass c : heap.getAllClasses()) {
            if (c.getName().equals(name)) {
                found.add(c);
            }
        }
        return found;
    }

    static boolean hasField(JavaClass c, String name) {
        for (JavaClass k = c; k != null; k = k.getSuperClass()) {
            for (org.graalvm.visualvm.lib.jfluid.heap.Field f : k.getFields()) {
                if (f.getName().equals(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    static boolean hasStaticField(JavaClass c, String name) {
        for (FieldValue v : c.getStaticFieldValues()) {
            if (v.getField().getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    void field(String cls, String name) {
        List<JavaClass> classes = classesNamed(cls);
        if (classes.isEmpty()) {
            out.println("absent\t--field\t" + esc(cls) + "\t-");
        }
        for (JavaClass c : classes) {
            if (!hasField(c, name)) {
                out.println("absent\t--field\t" + esc(cls) + "\t" + esc(name));
                continue;
            }
            Iterator<Instance> it = c.getInstancesIterator();
            while (it.hasNext()) {
                Instance i = it.next();
                out.println("field\t" + esc(cls) + "\t" + esc(name) + "\t" + i.getInstanceId() + "\t"
                        + value(i.getValueOfField(name)));
            }
        }
    }

    void staticField(String cls, String name) {
        List<JavaClass> classes = classesNamed(cls);
        if (classes.isEmpty()) {
            out.println("absent\t--static\t" + esc(cls) + "\t-");
        }
        for (JavaClass c : classes) {
            if (!hasStaticField(c, name)) {
                out.println("absent\t--static\t" + esc(cls) + "\t" + esc(name));
                continue;
            }
            out.println("static\t" + esc(cls) + "\t" + esc(name) + "\t" + value(c.getValueOfStaticField(name)));
        }
    }

    void rootsOf(String cls) {
        List<JavaClass> classes = classesNamed(cls);
        if (classes.isEmpty()) {
            out.println("absent\t--roots-of\t" + esc(cls) + "\t-");
        }
        for (JavaClass c : classes) {
            Iterator<Instance> it = c.getInstancesIterator();
            while (it.hasNext()) {
                Instance i = it.next();
                Collection<GCRoot> roots = heap.getGCRoots(i);
                StringBuilder kinds = new StringBuilder();
                if (roots != null) {
                    for (GCRoot r : roots) {
                        if (kinds.length() > 0) {
                            kinds.append(',');
                        }
                        kinds.append(constant(r.getKind()));
                    }
                }
                out.println("roots_of\t" + esc(cls) + "\t" + i.getInstanceId() + "\t"
                        + (kinds.length() > 0 ? kinds : "-"));
            }
        }
    }

    String value(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Instance) {
            Instance i = (Instance) v;
            String name = i.getJavaClass().getName();
            if (name.equals("java.lang.String")) {
                String text = stringText(i);
                if (text != null) {
                    return "str:" + esc(text);
                }
            }
            return "obj:" + esc(name) + "@" + i.getInstanceId();
        }
        return "prim:" + esc(v.toString());
    }

    // A java.lang.String's text from its `value` array: char[] up to JDK 8; from JDK 9 a byte[]
    // with `coder` 0 (Latin-1) or 1 (UTF-16 in the VM's byte order: little-endian on x86_64 and
    // aarch64). Null when the value is missing.
    static String stringText(Instance s) {
        Object value = s.getValueOfField("value");
        if (!(value instanceof PrimitiveArrayInstance)) {
            return null;
        }
        PrimitiveArrayInstance array = (PrimitiveArrayInstance) value;
        List<String> items = array.getValues();
        if (array.getJavaClass().getName().equals("char[]")) {
            StringBuilder b = new StringBuilder(items.size());
            for (String c : items) {
                b.append(c.charAt(0));
            }
            return b.toString();
        }
        byte[] bytes = new byte[items.size()];
        for (int k = 0; k < bytes.length; k++) {
            bytes[k] = Byte.parseByte(items.get(k));
        }
        Object coder = s.getValueOfField("coder");
        boolean utf16 = coder != null && ((Number) coder).intValue() == 1;
        return new String(bytes, utf16 ? StandardCharsets.UTF_16LE : StandardCharsets.ISO_8859_1);
    }

    static String esc(String s) {
        StringBuilder b = null;
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            String r = c == '\\' ? "\\\\" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : null;
            if (r != null && b == null) {
                b = new StringBuilder(s.substring(0, k));
            }
            if (b != null) {
                if (r != null) {
                    b.append(r);
                } else {
                    b.append(c);
                }
            }
        }
        return b == null ? s : b.toString();
    }
}
