package org.apache.kafka.common.record;
import java.nio.ByteBuffer;
public class MemoryRecords implements BaseRecords { final ByteBuffer b; MemoryRecords(ByteBuffer b){this.b=b;}
 public static MemoryRecords readableRecords(ByteBuffer b){return new MemoryRecords(b);} public int sizeInBytes(){return b.remaining();} public ByteBuffer buffer(){return b.duplicate();} }
