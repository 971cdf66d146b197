package org.apache.kafka.common.utils;
import java.nio.ByteBuffer; import java.nio.charset.StandardCharsets; import java.util.*;
public final class Utils {
  public static byte[] utf8(String s){return s.getBytes(StandardCharsets.UTF_8);}
  public static String utf8(ByteBuffer buffer, int length){ return utf8(buffer, 0, length);}
  public static String utf8(ByteBuffer buffer, int offset, int length){ if (buffer.hasArray()) return new String(buffer.array(), buffer.arrayOffset()+buffer.position()+offset, length, StandardCharsets.UTF_8); byte[] b=new byte[length]; for(int i=0;i<length;i++) b[i]=buffer.get(buffer.position()+offset+i); return new String(b, StandardCharsets.UTF_8);}
  public static int utf8Length(CharSequence s){ return s.toString().getBytes(StandardCharsets.UTF_8).length;}
  public static <T extends Comparable<? super T>> List<T> sorted(Collection<T> c){ List<T> l=new ArrayList<>(c); Collections.sort(l); return Collections.unmodifiableList(l);}
  public static <T> Class<? extends T> loadClass(String k, Class<T> b) throws ClassNotFoundException { return Class.forName(k).asSubclass(b);}
  public static <T> T newInstance(Class<T> c){ try { return c.getDeclaredConstructor().newInstance(); } catch(Exception e){ throw new RuntimeException(e);} }
}
