// The judge's entry point of every Java bot (judge/launchers/runtimes.py): compiled into each
// Java build beside the bot's sources, it runs the bot's main class with System.out on the
// protocol's descriptor, 3, and nothing else there.
//
// The JVM writes the first lines of a fatal error's report (a crash, or "There is insufficient
// memory for the Java Runtime Environment to continue") to descriptor 1 whatever its flags say:
// JDK 17 binds that stream before it reads them. The judge starts the JVM with descriptor 1 on
// the bot's log and the protocol on 3, and this class points System.out at 3, so a bot's output
// is where it was and the JVM's reports are in its log.
package tapis;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;

public final class Launcher {
    private static final int PROTOCOL = 3;

    private Launcher() {}

    public static void main(String[] args) throws Throwable {
        // A descriptor by number: java.io has no public way, hence its field (the judge opens
        // java.io to this class with --add-opens).
        FileDescriptor protocol = new FileDescriptor();
        Field fd = FileDescriptor.class.getDeclaredField("fd");
        fd.setAccessible(true);
        fd.setInt(protocol, PROTOCOL);
        // As the JVM's own System.out: flushed at each end of line, in the default charset.
        System.setOut(new PrintStream(new BufferedOutputStream(new FileOutputStream(protocol), 8192), true));

        Method main;
        try {
            Class<?> bot = Class.forName(args[0], false, ClassLoader.getSystemClassLoader());
            main = bot.getMethod("main", String[].class);
        } catch (ClassNotFoundException | NoSuchMethodException missing) {
            System.err.println("Error: no class " + args[0] + " with a method "
                    + "public static void main(String[] args): the entry file must declare it");
            System.exit(1);
            return;
        }
        if (!Modifier.isStatic(main.getModifiers())) {
            System.err.println("Error: the main method of " + args[0] + " is not static");
            System.exit(1);
        }
        // As the java command does, a class that is not public may hold it; a handle, not
        // Method.invoke, so that what main throws is reported as it was thrown.
        main.setAccessible(true);
        MethodHandles.lookup().unreflect(main).invoke(Arrays.copyOfRange(args, 1, args.length));
    }
}
